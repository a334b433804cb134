import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import type { AdminContext } from '../admin-context.js';
import type { OwnerControls } from './owner-controls.js';
import { UnreachableOwners } from './unreachable-owners.js';

type Transfer = (request: { topic: string; targetInstanceId: string }) => Promise<unknown>;

/** Owner controls whose TransferTopic answers with `transfer`, recording each call as `address topic target`. */
function controls(transfer: Transfer): OwnerControls & { calls: string[]; forgotten: string[] } {
  const calls: string[] = [];
  const forgotten: string[] = [];
  return {
    calls,
    forgotten,
    forget: (address: string) => void forgotten.push(address),
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
    const owners = controls(refused);
    const unreachable = new UnreachableOwners(context, owners);
    expect(await unreachable.moveOff('persistent://t/ns/b', 'gone:6650')).toBe(false);
    // No client is kept for an owner that may be gone for good.
    expect(owners.forgotten).toEqual(['gone:6650']);
  });

  it('lets one report wait for the move; other reports meanwhile answer at once, sharing the move', async () => {
    let finish: () => void = () => undefined;
    const slow: Transfer = () => new Promise((resolve) => (finish = () => resolve({ targetInstanceId: 'b' })));
    const owners = controls(slow);
    const unreachable = new UnreachableOwners(context, owners, { unreachableOwnerMoveWaitMs: 60_000 });
    let firstSettled = false;
    const first = unreachable.moveOff('persistent://t/ns/c', 'a:6650').finally(() => (firstSettled = true));
    expect(await unreachable.moveOff('persistent://t/ns/c', 'a:6650')).toBe(false);
    expect(firstSettled).toBe(false);
    expect(owners.calls).toHaveLength(1);
    finish();
    expect(await first).toBe(true);
  });

  it('answers after its wait when the move takes longer', async () => {
    let finish: () => void = () => undefined;
    const slow: Transfer = () => new Promise((resolve) => (finish = () => resolve({ targetInstanceId: 'b' })));
    const unreachable = new UnreachableOwners(context, controls(slow), { unreachableOwnerMoveWaitMs: 20 });
    expect(await unreachable.moveOff('persistent://t/ns/d', 'a:6650')).toBe(false);
    finish();
  });
});
