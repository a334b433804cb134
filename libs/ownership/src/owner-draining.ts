import { LedgerlineError } from '@ledgerline/errors';
import type { MetadataClients } from './metadata-clients.js';

/**
 * Marks an owner draining (or not) in the metadata service, so lookups and
 * the balancer place no topic on it; a drain goes on when this fails (it is
 * logged), since moving its topics away matters more than the mark.
 */
export async function markOwnerDraining(
  context: {
    lookup: MetadataClients['lookup'];
    session: { readonly sessionId: string };
    logger: { warn(details: object, message: string): void };
  },
  draining: boolean,
): Promise<void> {
  try {
    await context.lookup.setOwnerDraining({ sessionId: context.session.sessionId, draining }, { deadlineMs: 5_000 });
  } catch (thrown) {
    context.logger.warn({ err: LedgerlineError.from(thrown).message }, 'marking this owner draining failed');
  }
}
