import { LedgerlineError } from '@ledgerline/errors';
import type { MetadataAdmin } from '@ledgerline/metadata-service';

/** The tenant and namespace standalone always has, as Pulsar's standalone does. */
export const STANDALONE_TENANT = 'public';
export const STANDALONE_NAMESPACE = 'public/default';

/**
 * Creates `public/default` unless it exists, with topic auto-creation on, so
 * the first `ledgerline produce public/default/<topic>` (or an SDK producer,
 * consumer or reader) works on a fresh standalone without an admin call, as
 * on Pulsar's standalone. It does not depend on the Kafka listener, which
 * creates the same namespace for its own topics when it runs. A namespace
 * that already exists keeps its policies: an admin who turned auto-creation
 * off there has said so, and a restart must not undo it.
 */
export async function ensureStandaloneNamespace(
  admin: Pick<MetadataAdmin, 'createTenant' | 'createNamespace'>,
): Promise<void> {
  await existingIsFine(admin.createTenant(STANDALONE_TENANT));
  await existingIsFine(admin.createNamespace(STANDALONE_NAMESPACE, { allowAutoTopicCreation: true }));
}

async function existingIsFine(creation: Promise<unknown>): Promise<void> {
  try {
    await creation;
  } catch (error) {
    if (!(error instanceof LedgerlineError && error.code === 'ALREADY_EXISTS')) throw error;
  }
}

/** What standalone's start lines say of `public/default`: whether its topics are created on first use, as it was made. */
export async function standaloneNamespaceLine(admin: Pick<MetadataAdmin, 'getNamespace'>): Promise<string> {
  const { policies } = await admin.getNamespace(STANDALONE_NAMESPACE);
  return policies.allowAutoTopicCreation
    ? `${STANDALONE_NAMESPACE} (topics are created on first use)`
    : `${STANDALONE_NAMESPACE} (topic auto-creation is off there: ` +
        `ledgerline namespaces update ${STANDALONE_NAMESPACE} --allow-auto-topic-creation true)`;
}
