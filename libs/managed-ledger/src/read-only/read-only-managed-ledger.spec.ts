import { encodeLacAdvanced, InProcessBus, ledgerLacSubject } from '@ledgerline/bus';
import { LedgerlineError } from '@ledgerline/errors';
import { eventually } from '@ledgerline/testing';
import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { ManagedLedgerReason } from '../reasons.js';
import { ReadOnlyManagedLedger, type ReadOnlyLedgerSettings } from './read-only-managed-ledger.js';
import { payloadOf, testBackends, textOf, type TestBackends } from '../testing/fixtures.js';

const TOPIC = 'persistent://acme/writer/t';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 4,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  cursor: { snapshotIntervalMs: 0 },
};

interface Setup {
  backends: TestBackends;
  writer: ManagedLedger;
  bus: InProcessBus;
  views: ReadOnlyManagedLedger[];
}

let setup: Setup | undefined;

/** `keep`: a writer-side cursor at the start, so the writer trims nothing (it trims ledgers no cursor needs). */
async function start(keep = true): Promise<Setup> {
  const backends = testBackends();
  const bus = new InProcessBus();
  const writer = await ManagedLedger.open(TOPIC, { ...backends.deps(), bus }, { config });
  if (keep) await writer.openCursor('keep', { start: { initialPosition: 'earliest' } });
  setup = { backends, writer, bus, views: [] };
  return setup;
}

async function view(
  s: Setup,
  settings: Partial<ReadOnlyLedgerSettings>,
  withBus = true,
): Promise<ReadOnlyManagedLedger> {
  const opened = await ReadOnlyManagedLedger.open({
    topic: TOPIC,
    ledgerStore: s.backends.ledgerStore,
    metadata: s.backends.deps().metadata,
    ...(withBus ? { bus: s.bus } : {}),
    settings,
    logger: s.backends.logger,
  });
  s.views.push(opened);
  return opened;
}

/** What the writer owner does after each confirmed append: a "LAC advanced" hint. */
async function appendAndNotify(s: Setup, text: string, notify = true) {
  const appended = await s.writer.append(payloadOf(text));
  if (notify) {
    await s.bus.publish(
      ledgerLacSubject(appended.position.ledgerId),
      encodeLacAdvanced({ ledgerId: appended.position.ledgerId, lac: appended.position.entryId }),
    );
  }
  return appended;
}

/** Reads everything from the start with waits, as a subscription tailing the view would. */
async function tail(v: ReadOnlyManagedLedger, count: number): Promise<string[]> {
  const seen: string[] = [];
  let from = { ledgerId: 0, entryId: 0 };
  const signal = new AbortController().signal;
  while (seen.length < count) {
    const entries = await v.readEntries(from, 10);
    for (const entry of entries) seen.push(textOf(entry.payload));
    const last = entries[entries.length - 1];
    if (last !== undefined) from = { ledgerId: last.position.ledgerId, entryId: last.position.entryId + 1 };
    else await v.waitForEntries(from, signal);
  }
  return seen;
}

afterEach(async () => {
  for (const v of setup?.views ?? []) v.close();
  await setup?.writer.close().catch(() => undefined);
  await setup?.bus.close();
  setup = undefined;
});

describe('ReadOnlyManagedLedger', () => {
  it('reads what the writer appends across rollovers, with the writer offsets, without fencing the writer', async () => {
    const s = await start();
    const written: AppendResult[] = [];
    for (let i = 0; i < 6; i++) written.push(await appendAndNotify(s, `m${i}`));
    const v = await view(s, { lacFallbackMs: 60_000, metadataRefreshMs: 60_000 });
    const reading = tail(v, 14);
    for (let i = 6; i < 14; i++) written.push(await appendAndNotify(s, `m${i}`));
    expect(await reading).toEqual(Array.from({ length: 14 }, (_, i) => `m${i}`));
    const entries = await v.readEntries({ ledgerId: 0, entryId: 0 }, 100);
    expect(entries.map((e) => [e.position, e.firstOffset, e.lastOffset])).toEqual(
      written.map((w) => [w.position, w.firstOffset, w.lastOffset]),
    );
    // The writer was never fenced: it still appends to its open ledger.
    const after = await s.writer.append(payloadOf('still writing'));
    expect(after.position.ledgerId).toBe(written[13]!.position.ledgerId);
    expect(v.stats.lacNotifications).toBeGreaterThan(0);
    expect(v.stats.lacFallbackReads).toBe(0);
  });

  it('takes the store as the truth when a hint names a LAC the store has not confirmed: reads what is there, then the rest', async () => {
    const s = await start();
    const first = await appendAndNotify(s, 'm0');
    const v = await view(s, { lacFallbackMs: 60_000, metadataRefreshMs: 60_000 });
    expect(await tail(v, 1)).toEqual(['m0']);
    // A LAC two entries ahead of the store, as a notification that ran ahead of what a reader can read would say.
    const { ledgerId, entryId } = first.position;
    await s.bus.publish(ledgerLacSubject(ledgerId), encodeLacAdvanced({ ledgerId, lac: entryId + 2 }));
    await eventually(() => v.lastConfirmedPosition()?.entryId === entryId + 2, { description: 'the hint to arrive' });
    // No ENTRY_NOT_CONFIRMED reaches the reader: nothing past the store's LAC, and the view's LAC comes back to it.
    expect(await v.readEntries({ ledgerId, entryId: entryId + 1 }, 10)).toEqual([]);
    expect(v.lastConfirmedPosition()).toEqual(first.position);
    await appendAndNotify(s, 'm1');
    await appendAndNotify(s, 'm2');
    expect((await v.readEntries({ ledgerId, entryId: entryId + 1 }, 10)).map((e) => textOf(e.payload))).toEqual([
      'm1',
      'm2',
    ]);
  });

  it('gets every entry with no notification at all (no bus): the fallback re-reads the LAC and the ledger list', async () => {
    const s = await start();
    const v = await view(s, { lacFallbackMs: 5, metadataRefreshMs: 60_000 }, false);
    const reading = tail(v, 11);
    for (let i = 0; i < 11; i++) await appendAndNotify(s, `m${i}`, false);
    expect(await reading).toEqual(Array.from({ length: 11 }, (_, i) => `m${i}`));
    expect(v.stats.lacNotifications).toBe(0);
    expect(v.stats.lacFallbackReads).toBeGreaterThan(0);
  });

  it('moves a read in a trimmed ledger to the first entry still stored', async () => {
    const s = await start(false);
    const cursor = await s.writer.openCursor('c', { start: { initialPosition: 'earliest' } });
    const written: AppendResult[] = [];
    for (let i = 0; i < 9; i++) written.push(await appendAndNotify(s, `m${i}`));
    const v = await view(s, { lacFallbackMs: 60_000, metadataRefreshMs: 60_000 });
    cursor.ackCumulative(written[5]!.position);
    await cursor.flush();
    await s.writer.trim();
    expect(s.writer.ledgers()[0]!.ledgerId).toBe(written[4]!.position.ledgerId);
    // The writer's "info-changed" notification makes the view re-read the ledger list.
    await eventually(() => v.ledgers()[0]?.ledgerId === written[4]!.position.ledgerId);
    const [first] = await v.readEntries(written[0]!.position, 1);
    expect(first!.position).toEqual(written[4]!.position);
    expect(textOf(first!.payload)).toBe('m4');
  });

  it('waitForVersion reads metadata until it is at least as new as the writer', async () => {
    const s = await start();
    const v = await view(s, { lacFallbackMs: 60_000, metadataRefreshMs: 60_000 }, false);
    for (let i = 0; i < 9; i++) await appendAndNotify(s, `m${i}`, false);
    const { version } = s.writer.info();
    expect(v.version).toBeLessThan(version);
    await v.waitForVersion(version, s.writer.lastConfirmedPosition());
    expect(v.version).toBeGreaterThanOrEqual(version);
    expect(v.lastConfirmedPosition()).toEqual(s.writer.lastConfirmedPosition());
  });

  it('reports the deletion of the writer topic to its listeners and refuses reads after it', async () => {
    const s = await start();
    await appendAndNotify(s, 'm0');
    const v = await view(s, { lacFallbackMs: 60_000, metadataRefreshMs: 60_000 });
    const deleted = new Promise<LedgerlineError>((resolve) => v.onDeleted(resolve));
    await s.writer.delete();
    await v.refreshInfo();
    const error = await deleted;
    expect(error.reason).toBe(ManagedLedgerReason.MANAGED_LEDGER_DELETED);
    await expect(v.readEntries({ ledgerId: 0, entryId: 0 }, 1)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      reason: ManagedLedgerReason.MANAGED_LEDGER_DELETED,
    });
  });

  it('refuses to open a topic with no managed ledger', async () => {
    const s = await start();
    await expect(
      ReadOnlyManagedLedger.open({
        topic: 'persistent://acme/writer/missing',
        ledgerStore: s.backends.ledgerStore,
        metadata: s.backends.deps().metadata,
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', reason: ManagedLedgerReason.MANAGED_LEDGER_DELETED });
  });
});
