import { decodeLacAdvanced, type Bus } from '@ledgerline/bus';
import { LacNotifier, sharedLacTurn } from './lac-notifier.js';

describe('LacNotifier', () => {
  it('collapses the advances of one turn and those made while a publish is in flight into the newest', async () => {
    const sent: Array<{ subject: string; lac: number; offset: number | undefined }> = [];
    const pending: Array<() => void> = [];
    const bus = {
      publish: (subject: string, payload: Uint8Array) => {
        const { lac, offset } = decodeLacAdvanced(payload);
        sent.push({ subject, lac, offset });
        return new Promise<void>((resolve) => pending.push(resolve));
      },
    } as unknown as Bus;
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const notifier = new LacNotifier(bus);
    // The receipts of one store write settle in one turn: they make one hint, the newest.
    notifier.advanced(7, 0, 0);
    notifier.advanced(7, 1, 1);
    notifier.advanced(7, 2, 5);
    expect(sent).toEqual([]);
    await turn();
    expect(sent).toEqual([{ subject: 'ledgerline.ledger.7.lac', lac: 2, offset: 5 }]);
    // While that publish is in flight, later advances wait and collapse too.
    notifier.advanced(7, 3, 6);
    notifier.advanced(7, 4, 9);
    await turn();
    expect(sent).toHaveLength(1);
    pending.shift()!();
    await turn();
    expect(sent.map((s) => s.lac)).toEqual([2, 4]);
    expect(sent[1]!.offset).toBe(9);
    pending.shift()!();
    await turn();
    expect(sent).toHaveLength(2);
  });

  it('reports how long after its entry was stored each hint went out, and nothing for a hint that failed', async () => {
    let fail = false;
    const bus = {
      publish: () =>
        new Promise<void>((resolve, reject) => setTimeout(() => (fail ? reject(new Error('down')) : resolve()), 20)),
    } as unknown as Bus;
    const delays: number[] = [];
    const notifier = new LacNotifier(bus, (delayMs) => delays.push(delayMs));
    notifier.advanced(7, 0, 0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(15);
    fail = true;
    notifier.advanced(7, 1, 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(delays).toHaveLength(1);
  });
});

describe('sharedLacTurn', () => {
  it("sends the hints of every topic due in one turn from one callback, before the bus's flush runs", async () => {
    // A bus that writes as the NATS client does: what was published before its microtask runs goes out in one write.
    const writes: string[][] = [];
    let unflushed: string[] = [];
    const bus = {
      publish: async (subject: string) => {
        if (unflushed.length === 0) {
          queueMicrotask(() => {
            writes.push(unflushed);
            unflushed = [];
          });
        }
        unflushed.push(subject);
      },
    } as unknown as Bus;
    const turn = sharedLacTurn();
    const notifiers = [1, 2, 3].map(() => new LacNotifier(bus, undefined, turn));
    notifiers.forEach((notifier, index) => notifier.advanced(index + 1, 0, 0));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([['ledgerline.ledger.1.lac', 'ledgerline.ledger.2.lac', 'ledgerline.ledger.3.lac']]);
    // A notifier of its own turn, as before: each hint a write of its own.
    writes.length = 0;
    const alone = [4, 5].map(() => new LacNotifier(bus));
    alone.forEach((notifier, index) => notifier.advanced(index + 4, 0, 0));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([['ledgerline.ledger.4.lac'], ['ledgerline.ledger.5.lac']]);
  });
});
