import { GroupCoordinator, type JoinRequest } from '../group-coordinator.js';

/** Bounds small enough for a spec to reach: sessions from 100 ms, a 100 ms initial rebalance delay. */
export const COORDINATOR_SPEC_SETTINGS = {
  groupMinSessionTimeoutMs: 100,
  groupMaxSessionTimeoutMs: 60_000,
  groupInitialRebalanceDelayMs: 100,
  maxGroups: 10,
  maxGroupMembers: 5,
};

/** A JoinGroup (v0-3: no MEMBER_ID_REQUIRED) of group `g` by a dynamic consumer offering `range`, with `overrides`. */
export function coordinatorJoinRequest(memberId = '', overrides: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId: 'g',
    memberId,
    groupInstanceId: null,
    clientId: 'c',
    clientHost: '127.0.0.1',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    requireKnownMemberId: false,
    ...overrides,
  };
}

/**
 * A coordinator on Jest's fake timers for each test of the enclosing
 * describe: `current()` is the test's, closed (and the real timers back) after it.
 */
export function coordinatorPerTest(): { current(): GroupCoordinator } {
  let coordinator: GroupCoordinator | undefined;
  beforeEach(() => {
    jest.useFakeTimers();
    coordinator = new GroupCoordinator(COORDINATOR_SPEC_SETTINGS);
  });
  afterEach(() => {
    coordinator?.close();
    jest.useRealTimers();
  });
  return { current: () => coordinator! };
}
