import type { ManagedLedgerConfigInput } from './config.js';
import type { ManagedLedgerDependencies } from './context.js';
import type { HandOverState } from './hand-over-state.js';
import { ManagedLedger } from './managed-ledger.js';
import type { ManagedLedgerMetadata } from './metadata/metadata-access.js';
import { FaultInjectingMetadata, type MetadataCall } from './testing/fault-injecting-metadata.js';
import { payloadOf, testBackends, type TestBackends } from './testing/fixtures.js';

const TOPIC = 'persistent://acme/hand-over/t';
const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 0 },
};
const READS = ['getManagedLedgerInfo', 'listCursors', 'getCursorInfo'];

/** The backends' dependencies, counting the metadata reads an owner makes (`calls`: every call). */
function countingDeps(backends: TestBackends): { deps: ManagedLedgerDependencies; reads: string[]; calls: string[] } {
  const deps = backends.deps();
  const reads: string[] = [];
  const calls: string[] = [];
  const metadata = new Proxy(deps.metadata, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (READS.includes(String(key))) reads.push(String(key));
        calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as ManagedLedgerMetadata;
  return { deps: { ...deps, metadata }, reads, calls };
}

/** An owner that stored `count` entries, acknowledged the first `acked` on cursor 'sub', and closed. */
async function closedOwner(backends: TestBackends, count: number, acked: number) {
  const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
  const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
  const written = [];
  for (let i = 0; i < count; i++) written.push(await ml.append(payloadOf(`e${i}`)));
  cursor.ack(written.slice(0, acked).map((each) => each.position));
  await ml.close();
  return { ml, written };
}

describe('opening a managed ledger from the state its previous owner handed over', () => {
  it('reads no node, and serves what the previous owner stored and its cursors', async () => {
    const backends = testBackends();
    const { ml: previous, written } = await closedOwner(backends, 5, 3);
    const handedOver = previous.handOverState();
    expect(handedOver?.cursors.map((each) => each.name)).toEqual(['sub']);
    const { deps, reads, calls } = countingDeps(backends);
    const next = await ManagedLedger.open(TOPIC, deps, { config, handedOver: handedOver! });
    expect(reads).toEqual([]);
    // One write: the compare-and-set that records the new ledger; the cursor needs no claim of its own.
    expect(calls.filter((call) => call.startsWith('put'))).toEqual(['putManagedLedgerInfo']);
    expect(next.lastOffset).toBe(previous.lastOffset);
    expect(next.getCursor('sub')?.markDeletePosition).toEqual(written[2]!.position);
    const appended = await next.append(payloadOf('after'));
    expect(appended.firstOffset).toBe(previous.lastOffset + 1);
    const cursor = next.getCursor('sub')!;
    cursor.ack([written[3]!.position]);
    await cursor.flush();
    await next.close();
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    expect(reopened.getCursor('sub')?.markDeletePosition).toEqual(written[3]!.position);
    await reopened.close();
  });

  it("fences the new owner's cursor when its node was written behind its back after a hand-over", async () => {
    const backends = testBackends();
    const { ml: previous, written } = await closedOwner(backends, 3, 1);
    const handedOver = previous.handOverState()!;
    const next = await ManagedLedger.open(TOPIC, backends.deps(), { config, handedOver });
    const metadata = backends.deps().metadata;
    const node = (await metadata.getCursorInfo(next.path, 'sub'))!;
    await metadata.putCursorInfo(next.path, 'sub', node.value, node.version);
    const cursor = next.getCursor('sub')!;
    cursor.ack([written[1]!.position]);
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'ABORTED' });
    await next.close().catch(() => undefined);
  });

  it('reads the nodes again when the state is stale, and fences the owner that wrote since', async () => {
    const backends = testBackends();
    const { ml: first } = await closedOwner(backends, 4, 4);
    const stale = first.handOverState()!;
    // Another owner took the topic since that close: it stored more entries, moved the cursor, and holds it still.
    const between = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    const cursor = between.getCursor('sub')!;
    const later = [];
    for (let i = 0; i < 3; i++) later.push(await between.append(payloadOf(`l${i}`)));
    cursor.ack(later.map((each) => each.position));
    await cursor.flush();
    const { deps, reads } = countingDeps(backends);
    const next = await ManagedLedger.open(TOPIC, deps, { config, handedOver: stale });
    expect(reads).toContain('getManagedLedgerInfo');
    expect(next.lastOffset).toBe(between.lastOffset);
    // Everything stored is consumed: the mark-delete sits before the new owner's first ledger (canonical form).
    const newest = next.ledgers().at(-1)!.ledgerId;
    expect(newest).toBeGreaterThan(later[2]!.position.ledgerId);
    expect(next.getCursor('sub')?.markDeletePosition).toEqual({ ledgerId: newest, entryId: -1 });
    await expect(between.append(payloadOf('fenced'))).rejects.toMatchObject({ reason: 'LEDGER_FENCED' });
    await next.close();
    await between.close();
  });

  it('ignores a state that does not check out, without a write on it, and opens by reading the nodes', async () => {
    const backends = testBackends();
    const { ml: previous } = await closedOwner(backends, 2, 0);
    const handedOver = previous.handOverState()!;
    const broken: HandOverState[] = [
      { ...handedOver, info: { ...handedOver.info, version: -1 } },
      { ...handedOver, cursors: [handedOver.cursors[0]!, handedOver.cursors[0]!] },
      { ...handedOver, cursors: [{ ...handedOver.cursors[0]!, name: '' }] },
    ];
    for (const state of broken) {
      const { deps, calls } = countingDeps(backends);
      const next = await ManagedLedger.open(TOPIC, deps, { config, handedOver: state });
      // The node is read, and written once: no compare-and-set was tried on what the state said.
      expect(calls).toContain('getManagedLedgerInfo');
      expect(calls.filter((call) => call === 'putManagedLedgerInfo')).toHaveLength(1);
      expect(next.lastOffset).toBe(previous.lastOffset);
      expect(next.getCursors().map((cursor) => cursor.name)).toEqual(['sub']);
      await next.close();
    }
  });

  it.each<MetadataCall>(['putManagedLedgerInfo', 'putCursorInfo'])(
    'serves what was stored when the answer to the close write (%s) was lost: its state is stale',
    async (call) => {
      const backends = testBackends();
      const metadata = new FaultInjectingMetadata(backends.deps().metadata);
      const previous = await ManagedLedger.open(TOPIC, { ...backends.deps(), metadata }, { config });
      const cursor = await previous.openCursor('sub', { start: { initialPosition: 'earliest' } });
      const written = [];
      for (let i = 0; i < 4; i++) written.push(await previous.append(payloadOf(`e${i}`)));
      cursor.ack(written.slice(0, 2).map((each) => each.position));
      // The close's write lands, and the owner never hears so: the versions it hands over are one behind.
      metadata.faults.push({ call, mode: 'after' });
      await previous.close();
      const handedOver = previous.handOverState();
      // A cursor write in doubt hands nothing over: the next owner reads the nodes.
      if (call === 'putCursorInfo') expect(handedOver).toBeUndefined();
      const next = await ManagedLedger.open(TOPIC, backends.deps(), { config, ...(handedOver ? { handedOver } : {}) });
      expect(next.lastOffset).toBe(written[3]!.lastOffset);
      expect(next.getCursor('sub')?.markDeletePosition).toEqual(written[1]!.position);
      expect((await next.append(payloadOf('after'))).firstOffset).toBe(written[3]!.lastOffset + 1);
      await next.close();
    },
  );

  it('has no state to hand over before a close, nor after a fence', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    expect(ml.handOverState()).toBeUndefined();
    const next = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    await expect(ml.append(payloadOf('x'))).rejects.toMatchObject({ reason: 'LEDGER_FENCED' });
    await ml.close();
    expect(ml.handOverState()).toBeUndefined();
    await next.close();
  });
});
