import { findLinearization, type CasCall } from './testing/cas-history.js';

/* The linearizability checker itself: it must refuse histories that break the model, and accept the ones that do not. */

function call(
  client: number,
  op: CasCall['op'],
  span: [number, number],
  answer: CasCall['answer'],
  extra: Partial<CasCall> = {},
): CasCall {
  return { client, path: '/p', op, invokedAt: span[0], answeredAt: span[1], answer, ...extra };
}
const version = (v: number) => ({ kind: 'version' as const, version: v });
const value = (v: number, text: string) => ({ kind: 'value' as const, version: v, value: text });

it.each<[string, CasCall[], boolean]>([
  [
    'two compare-and-sets that both win on one version (a lost update)',
    [
      call(0, 'put', [1, 2], version(1), { value: 'a', expected: 'absent' }),
      call(1, 'put', [3, 6], version(2), { value: 'b', expected: 1 }),
      call(2, 'put', [4, 5], version(2), { value: 'c', expected: 1 }),
    ],
    false,
  ],
  [
    'a read of a value overwritten before the read began',
    [
      call(0, 'put', [1, 2], version(1), { value: 'a' }),
      call(0, 'put', [3, 4], version(2), { value: 'b' }),
      call(1, 'get', [5, 6], value(1, 'a')),
    ],
    false,
  ],
  [
    'a compare-and-set refused although nothing else changed the node',
    [
      call(0, 'put', [1, 2], version(1), { value: 'a' }),
      call(0, 'put', [3, 4], { kind: 'bad-version' }, { value: 'b', expected: 1 }),
    ],
    false,
  ],
  [
    'a failed call whose write shows after its failure was reported',
    [
      call(0, 'put', [1, 2], { kind: 'unknown' }, { value: 'a', expected: 'absent' }),
      call(1, 'get', [3, 4], { kind: 'absent' }),
      call(1, 'get', [5, 6], value(1, 'a')),
    ],
    false,
  ],
  [
    'concurrent compare-and-sets where one wins and the other sees the conflict',
    [
      call(0, 'put', [1, 2], version(1), { value: 'a', expected: 'absent' }),
      call(1, 'put', [3, 6], { kind: 'bad-version' }, { value: 'b', expected: 1 }),
      call(2, 'put', [4, 5], version(2), { value: 'c', expected: 1 }),
      call(1, 'get', [7, 8], value(2, 'c')),
    ],
    true,
  ],
  [
    'a failed call that did take effect, seen by a read that overlapped it',
    [
      call(0, 'put', [1, 4], { kind: 'unknown' }, { value: 'a', expected: 'absent' }),
      call(1, 'get', [2, 3], value(1, 'a')),
      call(1, 'delete', [5, 6], { kind: 'done' }, { expected: 1 }),
      call(1, 'put', [7, 8], version(1), { value: 'b', expected: 'absent' }),
    ],
    true,
  ],
])('judges %s', (_, calls, linearizable) => {
  expect(findLinearization(calls) === undefined).toBe(linearizable);
});
