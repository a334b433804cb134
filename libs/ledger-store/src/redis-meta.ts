import { storeCorrupt } from './errors.js';
import type { LedgerInfo, LedgerState } from './store.js';
import { decodeOwnerTags } from './validate.js';

const STATES: readonly LedgerState[] = ['open', 'fenced', 'closed'];

/**
 * Reads a ledger's meta hash (layout in redis-keys.ts). An empty hash is a
 * missing ledger; a hash that breaks the layout is corrupt data, reported
 * loudly rather than guessed at.
 */
export function parseLedgerMeta(ledgerId: number, fields: Record<string, string>): LedgerInfo | undefined {
  if (Object.keys(fields).length === 0) return undefined;
  const fail = (what: string) => storeCorrupt(`ledger ${ledgerId} has ${what}`, { ledgerId: String(ledgerId) });
  if (fields['v'] !== '1') throw fail(`meta layout version ${fields['v'] ?? '(none)'}, expected 1`);
  const state = fields['state'] as LedgerState;
  if (!STATES.includes(state)) throw fail(`an unknown state ${fields['state']}`);
  const lastAddConfirmed = Number(fields['lac']);
  const sizeBytes = Number(fields['size']);
  const createdAtMs = Number(fields['created']);
  if (!Number.isSafeInteger(lastAddConfirmed) || lastAddConfirmed < -1) throw fail(`a bad lac ${fields['lac']}`);
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) throw fail(`a bad size ${fields['size']}`);
  if (!Number.isSafeInteger(createdAtMs)) throw fail(`a bad created time ${fields['created']}`);
  const ownerTags = decodeOwnerTags(fields['tags'] ?? '');
  if (ownerTags === undefined) throw fail('unreadable owner tags');
  return { ledgerId, state, lastAddConfirmed, sizeBytes, ownerTags, createdAtMs };
}
