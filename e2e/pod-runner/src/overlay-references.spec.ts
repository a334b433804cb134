import { join } from 'node:path';
import { findRepositoryRoot } from '@ledgerline/cluster';
import { refusal } from '@ledgerline/testing';
import { containerProcess } from './container-command.js';
import { containerEnv } from './container-env.js';
import { parseManifests, renderOverlay, type Manifests } from './manifests.js';
import { missingReferences, runnableManifests } from './overlay-references.js';
import { PodRunnerReason } from './reasons.js';
import { DEV_OVERLAY_APPS } from './testing/index.js';

const root = findRepositoryRoot(__dirname);
// Both overlays run the same services; the prod one with TLS for each.
const SERVICES = DEV_OVERLAY_APPS;
const pod = { name: 'p-0', namespace: 'ledgerline', podIP: '10.0.0.9', labels: {} };

describe('objects an overlay names but does not hold', () => {
  it('are none in the dev overlay, which runs here as pods', async () => {
    const yaml = await renderOverlay(join(root, 'deploy/overlays/dev'));
    expect(missingReferences(parseManifests(yaml))).toEqual([]);
    expect(() => runnableManifests(yaml)).not.toThrow();
  }, 60_000);

  /*
   * The prod overlay cannot run here: its stores are a Redis Cluster and a
   * NATS cluster that their operators run, and its TLS and token Secrets come
   * from the cluster's secret tooling (deploy/overlays/prod/kustomization.yaml
   * says which). What the runner checks of it instead: that what it lacks is
   * exactly those Secrets, that `pods up` refuses it naming them, and
   * that with them every container's environment resolves and maps onto the
   * app bundle, pointing at the external stores.
   */
  describe('the prod overlay', () => {
    let yaml: string;
    let manifests: Manifests;
    beforeAll(async () => {
      yaml = await renderOverlay(join(root, 'deploy/overlays/prod'));
      manifests = parseManifests(yaml);
    }, 60_000);

    it('lacks exactly the TLS and token Secrets its operators provide', () => {
      const lacking = new Set(missingReferences(manifests).map((ref) => `${ref.kind} ${ref.name} ${ref.key}`));
      expect([...lacking].sort()).toEqual(
        [
          'Secret ledgerline-auth public.pem',
          'Secret ledgerline-auth super-user-roles',
          ...SERVICES.map((service) => `Secret ledgerline-${service}-tls *`),
        ].sort(),
      );
    });

    it('is refused by `pods up` with every missing Secret named', async () => {
      const refused = await refusal(Promise.resolve().then(() => runnableManifests(yaml)));
      expect(refused.reason).toBe(PodRunnerReason.BAD_MANIFEST);
      for (const service of SERVICES) expect(refused.message).toContain(`Secret ledgerline-${service}-tls`);
      expect(refused.message).toContain('Secret ledgerline-auth key super-user-roles');
    });

    it('runs every service from the image, several replicas each, against the external stores once given them', () => {
      const secrets = new Map(manifests.secrets);
      secrets.set('ledgerline-auth', { 'public.pem': 'key', 'super-user-roles': 'admin' });
      for (const service of SERVICES)
        secrets.set(`ledgerline-${service}-tls`, { 'tls.crt': 'c', 'tls.key': 'k', 'ca.crt': 'a' });
      const provided: Manifests = { ...manifests, secrets };
      expect(missingReferences(provided)).toEqual([]);
      expect(manifests.workloads.map((w) => [w.kind, w.metadata.name.replace('ledgerline-', '')]).sort()).toEqual(
        SERVICES.map((service) => ['Deployment', service]).sort(),
      );
      for (const workload of manifests.workloads) {
        expect(workload.spec.replicas).toBeGreaterThanOrEqual(2);
        for (const container of workload.spec.template.spec.containers) {
          const env = containerEnv(container, provided, pod);
          const app = containerProcess(container, { root, env, mounts: new Map(), node: 'node' });
          expect(app.args).toContain(`dist/apps/${env['APP']}/main.js`);
          if (env['LEDGERLINE_NATS_URL'] !== undefined) expect(env['LEDGERLINE_NATS_URL']).toMatch(/nats-2\.nats/);
          for (const [name, value] of Object.entries(env))
            if (name.endsWith('REDIS_URL')) expect(value).toMatch(/^redis:\/\/redis-cluster-0\./);
        }
      }
    });
  });
});
