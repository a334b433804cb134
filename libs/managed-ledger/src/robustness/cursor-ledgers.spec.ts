import type { ManagedLedgerConfigInput } from '../config.js';
import type { ManagedCursor } from '../cursors/managed-cursor.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { deferred } from '../testing/robustness/deferred.js';
import { untilNoFindings } from '../testing/robustness/waiting.js';
import { checkLedgerCoverage, readReferences } from '../testing/robustness/log-invariants.js';

/** Every snapshot goes to a new cursor ledger, so every flush switches the node to another ledger. */
const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 60_000, inlineSnapshotMaxBytes: 0, maxSnapshotsPerLedger: 1 },
};

describe('cursor ledgers a node stops naming', () => {
  let backend: RobustnessBackend;
  let topicCount = 0;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  /** An owner with a cursor that has ten entries to acknowledge one by one. */
  async function setUp(name: string) {
    const topic = `persistent://acme/robust/cursor-ledgers-${topicCount++}`;
    const proc = backend.owner(`${name}-a`);
    const ml = await ManagedLedger.open(topic, proc.deps, { config });
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 10 }, (_, i) => ml.append(payloadOf(`m${i}`))));
    let next = 0;
    const ackNext = () => cursor.ack([written[next++]!.position]);
    return { topic, proc, ml, cursor, ackNext };
  }

  async function coverage(ml: ManagedLedger): Promise<string[]> {
    return checkLedgerCoverage(backend.ledgerStore, backend.metadata, ml.path);
  }

  it.each(['before', 'after'] as const)(
    'are all marked deletable after a node write that failed %s reaching the store',
    async (mode) => {
      const { proc, ml, cursor, ackNext } = await setUp(`switch-${mode}`);
      ackNext();
      await cursor.flush();
      ackNext();
      proc.metadata.faults.push({ call: 'putCursorInfo', mode });
      await expect(cursor.flush()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      ackNext();
      await cursor.flush();
      expect(await coverage(ml)).toEqual([]);
      await ml.close();
    },
  );

  // A close persists the cursors while it seals the ledger: the snapshot that switches the cursor's ledger
  // marks the old one deletable through the same ManagedLedgerInfo keeper the seal writes through.
  it('are all marked deletable when the close that switches them also seals the ledger', async () => {
    const { topic, ml, cursor, ackNext } = await setUp('close');
    ackNext();
    await cursor.flush();
    ackNext();
    ackNext();
    await ml.close();
    expect(await coverage(ml)).toEqual([]);
    const next = await ManagedLedger.open(topic, backend.owner('close-b').deps, { config });
    expect(next.getCursor('sub')?.markDeletePosition).toEqual(cursor.markDeletePosition);
    expect(await coverage(next)).toEqual([]);
    await next.close();
  });

  it('are carried to the next update when marking them deletable fails', async () => {
    const { proc, ml, cursor, ackNext } = await setUp('mark');
    ackNext();
    await cursor.flush();
    ackNext();
    proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode: 'before' });
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await ml.close();
    expect(await coverage(ml)).toEqual([]);
  });

  it('are deleted when another owner takes the topic before they are marked', async () => {
    const { topic, proc, ml, cursor, ackNext } = await setUp('takeover');
    ackNext();
    await cursor.flush();
    const retiring = cursor.cursorLedgerId;
    ackNext();
    const gate = deferred();
    const marking = deferred();
    proc.metadata.faults.push({
      call: 'putManagedLedgerInfo',
      mode: 'pass',
      until: gate.promise,
      reached: () => marking.resolve(),
    });
    const flushed = cursor.flush().then(
      () => 'flushed',
      () => 'failed',
    );
    await marking.promise;
    const second = await ManagedLedger.open(topic, backend.owner('takeover-b').deps, { config });
    gate.resolve();
    expect(await flushed).toBe('failed');
    // The old owner deletes it in the background once it learns it was fenced.
    expect(await untilNoFindings(() => coverage(second))).toEqual([]);
    expect(await backend.ledgerStore.info(retiring)).toBeUndefined();
    await ml.close();
    await second.close();
  });

  it('are retired after a switch that finishes while the owner learns it lost the topic', async () => {
    const { topic, proc, ml, cursor, ackNext } = await setUp('late-switch');
    ackNext();
    await cursor.flush();
    const retiring = cursor.cursorLedgerId;
    ackNext();
    const gate = deferred();
    const switching = deferred();
    proc.metadata.faults.push({
      call: 'putCursorInfo',
      mode: 'pass',
      until: gate.promise,
      reached: () => switching.resolve(),
    });
    const flushed = cursor.flush().catch(() => undefined);
    await switching.promise;
    // The new owner claims the topic and fences its ledger, but reaches the cursor node only after the held switch lands.
    const next = backend.owner('late-switch-b');
    const recovering = deferred();
    const cursorGate = deferred();
    next.metadata.faults.push({
      call: 'getCursorInfo',
      mode: 'pass',
      until: cursorGate.promise,
      reached: () => recovering.resolve(),
    });
    const opening = ManagedLedger.open(topic, next.deps, { config });
    await recovering.promise;
    await expect(ml.append(payloadOf('late'))).rejects.toMatchObject({ code: 'ABORTED' });
    gate.resolve();
    await flushed;
    cursorGate.resolve();
    const second = await opening;
    expect(await untilNoFindings(() => coverage(second))).toEqual([]);
    expect(await backend.ledgerStore.info(retiring)).toBeUndefined();
    await ml.close();
    await second.close();
  });

  it('written by a switch in doubt go when another owner takes the cursor', async () => {
    const { topic, proc, ml, cursor, ackNext } = await setUp('abandon');
    ackNext();
    await cursor.flush();
    ackNext();
    proc.metadata.faults.push({ call: 'putCursorInfo', mode: 'before' });
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const second = await ManagedLedger.open(topic, backend.owner('abandon-b').deps, { config });
    ackNext();
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await untilNoFindings(() => coverage(second))).toEqual([]);
    await ml.close();
    await second.close();
  });

  it('go with a cursor deleted while its snapshot is being written, and the owner keeps the topic', async () => {
    const { proc, ml, cursor, ackNext } = await setUp('delete-while-writing');
    ackNext();
    const gate = deferred();
    const writing = deferred();
    proc.metadata.faults.push({
      call: 'putCursorInfo',
      mode: 'pass',
      until: gate.promise,
      reached: () => writing.resolve(),
    });
    const flushed = cursor.flush();
    await writing.promise;
    const deleted = ml.deleteCursor('sub');
    gate.resolve();
    await flushed;
    await deleted;
    expect(ml.state).toBe('open');
    await ml.append(payloadOf('still the owner'));
    expect(await backend.metadata.getCursorInfo(ml.path, 'sub')).toBeUndefined();
    expect(await coverage(ml)).toEqual([]);
    await ml.close();
  });

  it('cannot be taken from the new owner by the old one deleting the cursor', async () => {
    const { topic, ml } = await setUp('delete');
    const second = await ManagedLedger.open(topic, backend.owner('delete-b').deps, { config });
    await expect(ml.deleteCursor('sub')).rejects.toMatchObject({ code: 'ABORTED' });
    const refs = await readReferences(backend.metadata, second.path);
    const live: ManagedCursor = second.getCursor('sub')!;
    expect(await backend.metadata.getCursorInfo(second.path, 'sub')).toBeDefined();
    expect(refs.deletable.has(live.cursorLedgerId)).toBe(false);
    await ml.close();
    await second.close();
  });
});
