import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import type { AdminContext } from './admin-context.js';
import type { OwnerControls } from './owner-controls.js';
import { UnreachableOwners } from './unreachable-owners.js';

type Transfer = (request: { topic: string; targetInstanceId: string }) => Promise<unknown>;

/** Owner controls whose TransferTopic answers with `transfer`, recording each call as `address topic target`. */
function controls(transfer: Transfer): OwnerControls & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    to: (address: string) => ({
      transferTopic: (request: { topic: string; targetInstanceId: string }) => {
        calls.push(`${address} ${request.topic} ${request.targetInstanceId}`);
        return transfer(request);
      },
    }),
  } as never;
}

const moved: Transfer = async () => ({ targetInstanceId: 'b', targetAddress: 'b:6650', pausedMs: 30n });

describe('UnreachableOwners', () => {
  let nowMs = 1_000_000;
  const context = { now: () => nowMs } as AdminContext;

  it('has the owner transfer the topic anywhere else, once per cooldown', async () => {
    const owners = controls(moved);
    const unreachable = new UnreachableOwners(context, owners, { unreachableOwnerCooldownMs: 30_000 });
    expect(await unreachable.moveOff('persistent://t/ns/a', 'a:6650')).toBe(true);
    expect(owners.calls).toEqual(['a:6650 persistent://t/ns/a ']);
    nowMs += 29_000;
    expect(await unreachable.moveOff('persistent://t/ns/a', 'a:6650')).toBe(false);
    expect(owners.calls).toHaveLength(1);
    nowMs += 1_000;
    expect(await unreachable.moveOff('persistent://t/ns/a', 'a:6650')).toBe(true);
    expect(owners.calls).toHaveLength(2);
  });

  it('moves nothing with the cooldown set to 0', async () => {
    const owners = controls(moved);
    const unreachable = new UnreachableOwners(context, owners, { unreachableOwnerCooldownMs: 0 });
    expect(await unreachable.moveOff('persistent://t/ns/a', 'a:6650')).toBe(false);
    expect(owners.calls).toEqual([]);
  });

  it('answers false, without throwing, when the owner does not answer either', async () => {
    const refused: Transfer = async () => {
      throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'connection refused');
    };
    const unreachable = new UnreachableOwners(context, controls(refused));
    expect(await unreachable.moveOff('persistent://t/ns/b', 'gone:6650')).toBe(false);
  });

  it('answers after the wait when the move takes longer, and reports of the same topic share one move', async () => {
    let finish: () => void = () => undefined;
    const slow: Transfer = () => new Promise((resolve) => (finish = () => resolve({ targetInstanceId: 'b' })));
    const owners = controls(slow);
    const unreachable = new UnreachableOwners(context, owners, { unreachableOwnerMoveWaitMs: 20 });
    const reports = [1, 2, 3].map(() => unreachable.moveOff('persistent://t/ns/c', 'a:6650'));
    expect(await Promise.all(reports)).toEqual([false, false, false]);
    expect(owners.calls).toHaveLength(1);
    finish();
  });
});
