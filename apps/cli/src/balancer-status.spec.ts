import { create } from '@bufbuild/protobuf';
import { GetBalancerStatusResponseSchema } from '@ledgerline/proto';
import { balancerStatusLines } from './commands/balancer-commands.js';

describe('ledgerline balancer status', () => {
  it('says what the balancer saw, decided and did, and why', () => {
    const status = create(GetBalancerStatusResponseSchema, {
      active: true,
      leaderId: 'leader-1',
      lastRoundAtMs: 10_000n,
      rounds: 7n,
      movesTotal: 2n,
      decisions: ['default: out of balance for 3 rounds: shedding 1 topic(s)'],
      owners: [
        { group: 'default', instanceId: 'w0', topics: 30, load: 30 },
        { group: 'default', instanceId: 'w1', topics: 10, load: 10.5 },
      ],
      recentMoves: [
        {
          topic: 'persistent://t/ns/a',
          fromInstanceId: 'w0',
          toInstanceId: 'w1',
          reason: "shed: w0 was 48% above its group's mean load 20.2",
          atMs: 9_000n,
          outcome: 'moved',
          pausedMs: 120n,
        },
        {
          topic: 'persistent://t/ns/b',
          fromInstanceId: 'w0',
          toInstanceId: 'w1',
          reason: 'shed',
          atMs: 9_500n,
          outcome: 'failed: NOT_OWNER',
        },
      ],
    });
    expect(balancerStatusLines(status, 12_500)).toEqual([
      'leader leader-1: round 7 2.5 s ago, 2 topic(s) moved in all',
      '  default: out of balance for 3 rounds: shedding 1 topic(s)',
      'owners:',
      '  default/w0: 30 topic(s), load 30.0',
      '  default/w1: 10 topic(s), load 10.5',
      'recent moves (oldest first):',
      `  1970-01-01T00:00:09.000Z persistent://t/ns/a w0 -> w1: moved, paused 120 ms (shed: w0 was 48% above its group's mean load 20.2)`,
      '  1970-01-01T00:00:09.500Z persistent://t/ns/b w0 -> w1: failed: NOT_OWNER (shed)',
    ]);
    expect(balancerStatusLines(create(GetBalancerStatusResponseSchema, {}), 0)[0]).toMatch(
      /no balancer has finished a round/,
    );
  });
});
