import { decodeLacAdvanced, type Bus } from '@ledgerline/bus';
import { LacNotifier } from './lac-notifier.js';

describe('LacNotifier', () => {
  it('keeps at most one publish in flight and collapses the advances meanwhile into the newest', async () => {
    const sent: Array<{ subject: string; lac: number; offset: number | undefined }> = [];
    const pending: Array<() => void> = [];
    const bus = {
      publish: (subject: string, payload: Uint8Array) => {
        const { lac, offset } = decodeLacAdvanced(payload);
        sent.push({ subject, lac, offset });
        return new Promise<void>((resolve) => pending.push(resolve));
      },
    } as unknown as Bus;
    const notifier = new LacNotifier(bus);
    notifier.advanced(7, 0, 0);
    notifier.advanced(7, 1, 1);
    notifier.advanced(7, 2, 5);
    expect(sent).toEqual([{ subject: 'ledgerline.ledger.7.lac', lac: 0, offset: 0 }]);
    pending.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((s) => s.lac)).toEqual([0, 2]);
    expect(sent[1]!.offset).toBe(5);
    pending.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(2);
  });
});
