import type { OwnerRecord } from '../records/records.js';
import { rendezvousPick } from '@ledgerline/metadata-contract';

/**
 * Where a topic without a lease belongs: the rendezvous choice among the
 * candidates that are not draining (for a lookup, all of them when every one
 * is draining, since serving from a draining owner beats serving from none).
 * A move (`movingFrom` names the owner it leaves) never goes to a draining owner.
 */
export function placeTopic(
  owners: readonly OwnerRecord[],
  topic: string,
  movingFrom?: string,
): OwnerRecord | undefined {
  const eligible = owners.filter((owner) => owner.instanceId !== movingFrom);
  const serving = eligible.filter((owner) => owner.draining !== true);
  const candidates = serving.length > 0 || movingFrom !== undefined ? serving : eligible;
  return rendezvousPick(candidates, (owner) => owner.instanceId, topic);
}
