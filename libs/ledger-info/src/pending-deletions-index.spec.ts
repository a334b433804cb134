import {
  decodePendingDeletionEntry,
  encodePendingDeletionEntry,
  pendingDeletionEntryPath,
  pendingDeletionShard,
  pendingDeletionShardDir,
  PENDING_DELETION_SHARDS,
} from './pending-deletions-index.js';
import { LedgerInfoReason } from './reasons.js';

const PATH = '/managed-ledgers/acme/ns/persistent/t';

describe('the pending-deletions index', () => {
  it('names an entry by a digest of the path, in its shard', () => {
    const shard = pendingDeletionShard(PATH);
    expect(shard).toBeGreaterThanOrEqual(0);
    expect(shard).toBeLessThan(PENDING_DELETION_SHARDS);
    expect(pendingDeletionEntryPath(PATH)).toMatch(new RegExp(`^/pending-deletions/${shard}/[0-9a-f]{32}$`));
  });

  it('reads back what it writes', () => {
    const entry = { managedLedgerPath: PATH, indexedAtMs: 123 };
    expect(decodePendingDeletionEntry(encodePendingDeletionEntry(entry))).toEqual(entry);
  });

  it('refuses values it never wrote and shards that do not exist', () => {
    for (const bytes of [new Uint8Array([1, 2, 3]), new Uint8Array([0x70, 1, 0x7b])]) {
      expect(() => decodePendingDeletionEntry(bytes)).toThrow(
        expect.objectContaining({ code: 'DATA_LOSS', reason: LedgerInfoReason.CORRUPT_PENDING_DELETION_ENTRY }),
      );
    }
    expect(() => pendingDeletionShardDir(PENDING_DELETION_SHARDS)).toThrow(
      expect.objectContaining({ reason: LedgerInfoReason.INVALID_SHARD }),
    );
  });
});
