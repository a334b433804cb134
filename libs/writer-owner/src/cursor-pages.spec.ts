import { refusal } from '@ledgerline/testing';
import { InitialPosition, type EntryRange, type Position } from '@ledgerline/proto';
import { MAX_ACK_MAP_CELLS, MAX_ACKED_RANGES_PAGE } from './cursor-pages.js';
import { noConsumers } from './testing/no-consumers.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const ENTRIES = 41;

describe('writer owner: a cursor of any size, summarised and paged', () => {
  let harness: WriterHarness;
  let topic: string;
  const positions: Position[] = [];
  const subscription = 'holey';

  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers });
    topic = await harness.createTopic('cursor-pages');
    for (let i = 0; i < ENTRIES; i++) {
      const { receipt } = await harness.topics.publishOne({ message: { topic, payload: new Uint8Array([i]) } });
      positions.push(receipt!.position!);
    }
    await harness.cursors.createCursor({
      topic,
      subscription,
      start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
    });
    // Every odd entry acknowledged: 20 ranges of one entry, 21 holes.
    const ackedRanges = positions
      .filter((_, index) => index % 2 === 1)
      .map((p) => ({ ledgerId: p.ledgerId, firstEntryId: p.entryId, lastEntryId: p.entryId }));
    const answer = await harness.cursors.updateCursor({
      topic,
      subscription,
      update: { case: 'delta', value: { ackedRanges } },
      withoutRanges: true,
    });
    // The bulk writer asked for no ranges back: it gets the cursor's other state.
    expect(answer.cursor!.ackedRanges).toEqual([]);
    expect(answer.cursor!.lastConfirmedEntry).toEqual(positions[ENTRIES - 1]);
  });
  afterAll(async () => harness.close());

  it('summarises the cursor as an ack map without its ranges', async () => {
    const summary = await harness.cursors.getCursorSummary({ topic, subscription, cells: 4 });
    expect(summary.cursor!.ackedRanges).toEqual([]);
    expect(summary.cursor!.markDelete).toMatchObject({ ledgerId: positions[0]!.ledgerId, entryId: -1n });
    const map = summary.ackMap!;
    expect(map).toMatchObject({
      spanEntries: BigInt(ENTRIES),
      ackedRanges: 20n,
      ackedEntries: 20n,
      unplacedRanges: 0n,
    });
    expect(map.spanFirst).toEqual(positions[0]);
    expect(map.spanLast).toEqual(positions[ENTRIES - 1]);
    expect(map.cells.map((cell) => [cell.entries, cell.ackedEntries])).toEqual([
      [11n, 5n],
      [11n, 6n],
      [11n, 5n],
      [8n, 4n],
    ]);
    // One message per entry: every cell knows its offsets.
    expect(map.cells[1]).toMatchObject({ firstOffset: 11n, lastOffset: 21n });
  });

  it('pages the ranges from a position, in order, and they are the ranges GetCursor lists', async () => {
    const whole = await harness.cursors.getCursor({ topic, subscription });
    const paged: EntryRange[] = [];
    let from: Position | undefined;
    let pages = 0;
    for (;;) {
      const page = await harness.cursors.listAckedRanges({ topic, subscription, limit: 7, ...(from ? { from } : {}) });
      paged.push(...page.ranges);
      pages++;
      if (!page.more) break;
      const last = page.ranges.at(-1)!;
      from = { $typeName: 'ledgerline.v1.Position', ledgerId: last.ledgerId, entryId: last.lastEntryId + 1n };
    }
    expect(pages).toBe(3);
    expect(paged).toEqual(whole.cursor!.ackedRanges);
    // A position inside a range starts the page at that range; one past the last entry finds nothing.
    const inside = await harness.cursors.listAckedRanges({ topic, subscription, limit: 1, from: positions[5] });
    expect(inside.ranges[0]!.firstEntryId).toBe(positions[5]!.entryId);
    expect(inside.more).toBe(true);
    const beyond = await harness.cursors.listAckedRanges({
      topic,
      subscription,
      from: { ledgerId: positions[ENTRIES - 1]!.ledgerId, entryId: positions[ENTRIES - 1]!.entryId + 1n },
    });
    expect(beyond).toMatchObject({ ranges: [], more: false });
  });

  it('refuses counts past their bounds and names the subscription it does not have', async () => {
    const cells = await refusal(
      harness.cursors.getCursorSummary({ topic, subscription, cells: MAX_ACK_MAP_CELLS + 1 }),
    );
    expect(cells).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST' });
    expect(cells.message).toContain(`1 to ${MAX_ACK_MAP_CELLS}`);
    const limit = await refusal(
      harness.cursors.listAckedRanges({ topic, subscription, limit: MAX_ACKED_RANGES_PAGE + 1 }),
    );
    expect(limit).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST' });
    const negative = await refusal(harness.cursors.listAckedRanges({ topic, subscription, limit: -1 }));
    expect(negative.code).toBe('INVALID_ARGUMENT');
    const badFrom = await refusal(
      harness.cursors.listAckedRanges({ topic, subscription, from: { ledgerId: -5n, entryId: 0n } }),
    );
    expect(badFrom.code).toBe('INVALID_ARGUMENT');
    const missing = await refusal(harness.cursors.getCursorSummary({ topic, subscription: 'nobody' }));
    expect(missing).toMatchObject({ code: 'NOT_FOUND', reason: 'SUBSCRIPTION_NOT_FOUND' });
  });
});
