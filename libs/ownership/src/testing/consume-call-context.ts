import type { CallContext } from '@ledgerline/rpc';

/** The call context of a Consume stream driven by hand in a spec: no deadline, never cancelled. */
export function consumeCallContext(): CallContext {
  return {
    method: '/ledgerline.v1.TopicsService/Consume',
    peer: 'test',
    deadlineMs: Infinity,
    signal: new AbortController().signal,
  } as CallContext;
}
