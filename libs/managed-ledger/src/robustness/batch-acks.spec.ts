import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';

const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 60_000 },
};

describe('batch index acknowledgements across a restart', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('keep the acknowledged last index of a batch, so the backlog stays exact and later acks are accepted', async () => {
    const topic = 'persistent://acme/robust/batch-acks';
    const first = await ManagedLedger.open(topic, backend.owner('first').deps, { config });
    const cursor = await first.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const consumed = await first.append(payloadOf('consumed'));
    const batch = await first.append(payloadOf('batch of 3'), 3);
    const singles = await Promise.all([1, 2, 3].map((i) => first.append(payloadOf(`single ${i}`))));
    cursor.ackCumulative(consumed.position);
    cursor.ack([singles[1]!.position]);
    // The smallest encoding is Pulsar's: it stores the indexes still to deliver (here only 1), not the batch size.
    cursor.ackBatchIndexes(batch.position, [0, 2], 3);
    expect(await cursor.backlog()).toBe(3);
    await first.close();

    const second = await ManagedLedger.open(topic, backend.owner('second').deps, { config });
    const recovered = second.getCursor('sub')!;
    expect(recovered.exportState().batchAcks).toEqual([
      { position: batch.position, ackedIndexes: [0, 2], batchSize: 3 },
    ]);
    expect(await recovered.backlog()).toBe(3);
    recovered.ackBatchIndexes(batch.position, [1], 3);
    expect(await recovered.backlog()).toBe(2);
    await second.close();
  });
});
