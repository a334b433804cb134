import { refusal } from '@ledgerline/testing';
import { InitialPosition } from '@ledgerline/proto';
import { noConsumers } from './testing/no-consumers.js';
import { MAX_CURSOR_PROPERTY_VALUE_LENGTH } from './cursors-service.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

describe('writer owner: cursors for read-only owners, seek, find and unsubscribe', () => {
  let harness: WriterHarness;
  let topic: string;
  const positions: Array<{ ledgerId: bigint; entryId: bigint }> = [];
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers });
    topic = await harness.createTopic('cursors');
    for (let i = 0; i < 10; i++) {
      const { receipt } = await harness.topics.publishOne({ message: { topic, payload: new Uint8Array([i]) } });
      positions.push(receipt!.position!);
    }
  });
  afterAll(async () => harness.close());

  it('merges ack deltas by union, so two readers never undo each other, and answers with the ledger version', async () => {
    const created = await harness.cursors.createCursor({
      topic,
      subscription: 'readers',
      start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
    });
    expect(created.created).toBe(true);
    expect(created.cursor!.lastConfirmedEntry).toEqual(positions[9]);
    expect(created.cursor!.managedLedgerVersion).toBeGreaterThan(0n);
    const again = await harness.cursors.createCursor({ topic, subscription: 'readers' });
    expect(again.created).toBe(false);
    const range = (from: number, to: number) => ({
      ledgerId: positions[from]!.ledgerId,
      firstEntryId: positions[from]!.entryId,
      lastEntryId: positions[to]!.entryId,
    });
    // Reader A acks 2..3, reader B acks 0..1 and re-sends A's delta: the union holds 0..3.
    await harness.cursors.updateCursor({
      topic,
      subscription: 'readers',
      update: { case: 'delta', value: { ackedRanges: [range(2, 3)] } },
    });
    await harness.cursors.updateCursor({
      topic,
      subscription: 'readers',
      update: { case: 'delta', value: { ackedRanges: [range(0, 1)] } },
    });
    const merged = await harness.cursors.updateCursor({
      topic,
      subscription: 'readers',
      update: { case: 'delta', value: { ackedRanges: [range(2, 3), range(6, 6)] } },
    });
    expect(merged.cursor!.markDelete).toEqual(positions[3]);
    expect(merged.cursor!.ackedRanges).toHaveLength(1);
    const stats = await harness.topics.getTopicStats({ topic });
    expect(stats.subscriptions.map((s) => [s.name, s.backlogMessages, s.ackedRanges])).toEqual([['readers', 5n, 1n]]);
  });

  it('resets by epoch: a reset from an older epoch and a delta against it are refused', async () => {
    const read = await harness.cursors.getCursor({ topic, subscription: 'readers' });
    const epoch = read.cursor!.resetEpoch;
    const reset = await harness.cursors.updateCursor({
      topic,
      subscription: 'readers',
      update: { case: 'reset', value: { position: positions[1], expectedResetEpoch: epoch } },
    });
    expect(reset.cursor!.resetEpoch).toBe(epoch + 1n);
    const stale = await refusal(
      harness.cursors.updateCursor({
        topic,
        subscription: 'readers',
        update: { case: 'reset', value: { position: positions[5], expectedResetEpoch: epoch } },
      }),
    );
    expect(stale.code).toBe('ABORTED');
    const staleDelta = await refusal(
      harness.cursors.updateCursor({
        topic,
        subscription: 'readers',
        update: { case: 'delta', value: { resetEpoch: epoch } },
      }),
    );
    expect(staleDelta.reason).toBe('CURSOR_RESET_EPOCH_MISMATCH');
  });

  it('seeks by offset, finds positions by offset and time, and unsubscribes', async () => {
    const sought = await harness.topics.seek({ topic, subscription: 'readers', target: { case: 'offset', value: 7n } });
    expect(sought.position).toEqual(positions[7]);
    const found = await harness.topics.findPosition({ topic, target: { case: 'offset', value: 4n } });
    expect(found.position).toEqual(positions[4]);
    expect(found.offset).toBe(4n);
    const past = await harness.topics.findPosition({ topic, target: { case: 'offset', value: 99n } });
    expect(past.pastEnd).toBe(true);
    // Past the end, the offset is the next one to be written: where a reader started there waits.
    expect(past.offset).toBe(BigInt(positions.length));
    const byTime = await harness.topics.findPosition({ topic, target: { case: 'timestampMs', value: 0n } });
    expect(byTime.position).toEqual(positions[0]);
    expect(byTime.offset).toBe(0n);
    const missing = await refusal(
      harness.topics.seek({ topic, subscription: 'nobody', target: { case: 'offset', value: 1n } }),
    );
    expect([missing.code, missing.reason]).toEqual(['NOT_FOUND', 'SUBSCRIPTION_NOT_FOUND']);
    const reserved = await refusal(harness.cursors.getCursor({ topic, subscription: 'ledgerline.dedup' }));
    expect(reserved.code).toBe('INVALID_ARGUMENT');
    await harness.topics.unsubscribe({ topic, subscription: 'readers' });
    expect((await harness.topics.getTopicStats({ topic })).subscriptions).toEqual([]);
  });

  it('keeps string cursor properties set at creation and by updates, and refuses an oversized one unapplied', async () => {
    const created = await harness.cursors.createCursor({
      topic,
      subscription: 'labelled',
      start: { case: 'offset', value: 2n },
      cursorProperties: { note: 'first' },
    });
    expect(created.cursor!.cursorProperties).toEqual({ note: 'first' });
    const updated = await harness.cursors.updateCursor({
      topic,
      subscription: 'labelled',
      update: { case: 'reset', value: { position: positions[4], expectedResetEpoch: created.cursor!.resetEpoch } },
      cursorProperties: { note: 'second', other: '' },
    });
    expect(updated.cursor!.cursorProperties).toEqual({ note: 'second', other: '' });
    const oversized = await refusal(
      harness.cursors.updateCursor({
        topic,
        subscription: 'labelled',
        update: { case: 'reset', value: { position: positions[6], expectedResetEpoch: updated.cursor!.resetEpoch } },
        cursorProperties: { note: 'x'.repeat(MAX_CURSOR_PROPERTY_VALUE_LENGTH + 1) },
      }),
    );
    expect([oversized.code, oversized.reason]).toEqual(['INVALID_ARGUMENT', 'INVALID_REQUEST']);
    const after = await harness.cursors.getCursor({ topic, subscription: 'labelled' });
    expect(after.cursor!.cursorProperties).toEqual({ note: 'second', other: '' });
    expect(after.cursor!.markDelete).toEqual(positions[3]);
  });

  it('resets to an offset in one call, creating the cursor when asked, whatever its epoch with any_epoch', async () => {
    const commit = (offset: bigint, metadata: string) =>
      harness.cursors.updateCursor({
        topic,
        subscription: 'group',
        create: true,
        update: { case: 'reset', value: { offset, anyEpoch: true } },
        properties: { committed: offset },
        cursorProperties: { metadata },
        withoutRanges: true,
      });
    const first = await commit(3n, 'm1');
    expect([first.cursor!.markDelete, first.cursor!.properties, first.cursor!.cursorProperties]).toEqual([
      positions[2],
      { committed: 3n },
      { metadata: 'm1' },
    ]);
    // The epoch moved with the first reset; this one never read it.
    const second = await commit(8n, 'm2');
    expect(second.cursor!.markDelete).toEqual(positions[7]);
    expect(second.cursor!.resetEpoch).toBeGreaterThan(first.cursor!.resetEpoch);
    await harness.topics.unloadTopic({ topic });
    const read = await harness.cursors.getCursor({ topic, subscription: 'group' });
    expect([read.cursor!.markDelete, read.cursor!.properties, read.cursor!.cursorProperties]).toEqual([
      positions[7],
      { committed: 8n },
      { metadata: 'm2' },
    ]);
    const reset = (subscription: string, value: object, create = false) =>
      refusal(harness.cursors.updateCursor({ topic, subscription, create, update: { case: 'reset', value } }));
    const missing = await reset('nobody', { offset: 1n, anyEpoch: true });
    expect([missing.code, missing.reason]).toEqual(['NOT_FOUND', 'SUBSCRIPTION_NOT_FOUND']);
    const both = await reset('group', { position: positions[1], offset: 1n, anyEpoch: true });
    const neither = await reset('group', { anyEpoch: true }, true);
    const negative = await reset('group', { offset: -1n, anyEpoch: true });
    const staleEpoch = await reset('group', { offset: 1n, expectedResetEpoch: first.cursor!.resetEpoch });
    const createAlone = await refusal(
      harness.cursors.updateCursor({ topic, subscription: 'other', create: true, cursorProperties: { a: 'b' } }),
    );
    expect([both, neither, negative, staleEpoch, createAlone].map((error) => [error.code, error.reason])).toEqual([
      ['INVALID_ARGUMENT', 'INVALID_REQUEST'],
      ['INVALID_ARGUMENT', 'INVALID_REQUEST'],
      ['INVALID_ARGUMENT', 'INVALID_REQUEST'],
      ['ABORTED', 'BAD_VERSION'],
      ['INVALID_ARGUMENT', 'INVALID_REQUEST'],
    ]);
    const untouched = await harness.cursors.getCursor({ topic, subscription: 'group' });
    expect(untouched.cursor!.markDelete).toEqual(positions[7]);
    expect((await refusal(harness.cursors.getCursor({ topic, subscription: 'other' }))).code).toBe('NOT_FOUND');
  });
});
