import { Link } from 'react-router';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView, Table } from '../components/call-view';
import { permissionLine, policyLine } from '../format/policies';
import { formatCount, formatTime } from '../format/units';
import { paths } from '../paths';

export function TenantsPage() {
  const state = useCall(() => consoleClient.listTenantSummaries({}), 'tenants');
  return (
    <section data-testid="tenants-page">
      <h1>Tenants and namespaces</h1>
      <CallView state={state}>
        {(answer) => (
          <>
            {answer.truncated && <p className="muted">Showing the first {answer.tenants.length} tenants.</p>}
            {answer.tenants.map((tenant) => (
              <div key={tenant.name} className="card" data-testid={`tenant-${tenant.name}`}>
                <h2>{tenant.name}</h2>
                <p className="muted">
                  admins: {tenant.adminRoles.join(', ') || 'super-users only'} · created{' '}
                  {formatTime(tenant.createdAtMs)}
                </p>
                <Table
                  head={['namespace', 'topics', 'policies', 'permissions', 'created']}
                  rows={tenant.namespaces.map((namespace) => [
                    <Link to={paths.namespace(namespace.name)}>{namespace.name}</Link>,
                    formatCount(namespace.topicCount),
                    policyLine(namespace),
                    permissionLine(namespace),
                    formatTime(namespace.createdAtMs),
                  ])}
                  empty="No namespaces."
                />
              </div>
            ))}
          </>
        )}
      </CallView>
    </section>
  );
}
