import { AuthAction } from '@gen/admin_pb';
import type { NamespaceSummary } from '@gen/console_pb';

/** A namespace's policies as one short line; unset policies are left out. */
export function policyLine(namespace: NamespaceSummary): string {
  const policies = namespace.policies;
  if (policies === undefined) return '';
  const parts: string[] = [];
  if (policies.numberOfTopicBuckets !== undefined) parts.push(`${policies.numberOfTopicBuckets} buckets`);
  if (policies.maxTopics !== undefined && policies.maxTopics > 0) parts.push(`max ${policies.maxTopics} topics`);
  if (policies.retentionTimeMinutes !== undefined) parts.push(`retention ${policies.retentionTimeMinutes} min`);
  if (policies.retentionSizeMb !== undefined) parts.push(`retention ${policies.retentionSizeMb} MB`);
  if (policies.ownerGroup !== undefined && policies.ownerGroup !== '') parts.push(`owner group ${policies.ownerGroup}`);
  if (policies.writerNamespace !== undefined && policies.writerNamespace !== '')
    parts.push(`reads ${policies.writerNamespace}`);
  if (policies.readonly === true) parts.push('read-only');
  if (policies.allowAutoTopicCreation === true) parts.push('auto-creates topics');
  return parts.join(' · ');
}

export function permissionLine(namespace: NamespaceSummary): string {
  if (!namespace.permissionsVisible) return 'hidden';
  const grants = Object.entries(namespace.permissions).map(
    ([role, granted]) =>
      `${role}: ${granted.actions.map((action) => (action === AuthAction.PRODUCE ? 'produce' : 'consume')).join('+')}`,
  );
  return grants.length === 0 ? 'none' : grants.join(', ');
}
