import { LedgerlineError } from '@ledgerline/errors';
import type { AppendListener, AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, textOf } from '../testing/fixtures.js';

/*
 * appendWith: the outcome of each append is told to a listener with the
 * caller's token and index, in queue order as promises would resolve, and a
 * refused append is told after the call returns, never inside it.
 */

const TOPIC = 'persistent://acme/orders/append-listener';

type Told = [string, number, string];

function recordingListener(told: Told[]): AppendListener<string> {
  return {
    appended: (token, index, result: AppendResult) =>
      told.push([token, index, `${result.position.entryId}@${result.firstOffset}-${result.lastOffset}`]),
    failed: (token, index, error) => told.push([token, index, LedgerlineError.from(error).code]),
  };
}

it('tells the listener of each append with its token and index, in the order they were made', async () => {
  const ml = await ManagedLedger.open(TOPIC, testBackends().deps());
  const told: Told[] = [];
  const listener = recordingListener(told);
  const appended = new Promise<void>((resolve) => {
    const last: AppendListener<string> = {
      appended: (token, index, result) => {
        listener.appended(token, index, result);
        resolve();
      },
      failed: listener.failed,
    };
    ml.appendWith(payloadOf('a'), 1, undefined, listener, 'first', 0);
    ml.appendWith(payloadOf('b'), 3, { maxEventTimeMs: 5 }, listener, 'first', 1);
    ml.appendWith(payloadOf('c'), 1, undefined, last, 'second', 7);
  });
  await appended;
  expect(told).toEqual([
    ['first', 0, '0@0-0'],
    ['first', 1, '1@1-3'],
    ['second', 7, '2@4-4'],
  ]);
  const read = await ml.readEntries({ ledgerId: ml.ledgers()[0]!.ledgerId, entryId: 0 }, { maxEntries: 10 });
  expect(read.map((entry) => textOf(entry.payload))).toEqual(['a', 'b', 'c']);
  await ml.close();
});

it('tells of a refused append after the call returns', async () => {
  const ml = await ManagedLedger.open(TOPIC, testBackends().deps());
  const told: Told[] = [];
  ml.appendWith(payloadOf('bad'), 0, undefined, recordingListener(told), 'refused', 2);
  expect(told).toEqual([]);
  await Promise.resolve();
  expect(told).toEqual([['refused', 2, 'INVALID_ARGUMENT']]);
  await ml.close();
});
