import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { RpcReason } from '@ledgerline/rpc';
import { eventually } from '@ledgerline/testing';
import type { MetadataClients } from './metadata-clients.js';
import { SessionWatch } from './session-watch.js';

const logger = { warn: () => undefined };

/** A lookup client whose WatchOwnerSession runs `stream` for each call, counting the calls. */
function watching(stream: (signal: AbortSignal) => AsyncIterable<{ earlyExpiryArmed: boolean }>) {
  const calls: string[] = [];
  const clients = {
    lookup: {
      watchOwnerSession: (request: { sessionId: string }, options: { signal: AbortSignal }) => {
        calls.push(request.sessionId);
        return stream(options.signal);
      },
    },
    admin: {},
  } as unknown as MetadataClients;
  return { clients, calls };
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

describe('SessionWatch', () => {
  it('holds the stream open, says when it is armed, and opens it again after it ends', async () => {
    let ends = 1;
    const { clients, calls } = watching(async function* (signal) {
      yield { earlyExpiryArmed: true };
      if (ends-- > 0) throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'metadata restarted');
      await aborted(signal);
    });
    const watch = new SessionWatch({ clients, logger, retryMs: 10 });
    watch.watch('s1');
    await eventually(() => calls.length === 2 && watch.earlyExpiryArmed, { attempts: 100 });
    watch.watch('s2');
    await eventually(() => calls.at(-1) === 's2', { attempts: 100 });
    watch.stop();
    expect(watch.earlyExpiryArmed).toBe(false);
    expect(calls).toEqual(['s1', 's1', 's2']);
  });

  it.each([
    ['the session expired', new LedgerlineError('NOT_FOUND', MetadataServiceReason.SESSION_EXPIRED, 'gone')],
    [
      'the metadata service predates the watch',
      new LedgerlineError('UNIMPLEMENTED', RpcReason.HANDLER_MISSING, 'unknown method'),
    ],
  ])('does not open the stream again when %s', async (_case, error) => {
    const { clients, calls } = watching(async function* () {
      yield* [];
      throw error;
    });
    const watch = new SessionWatch({ clients, logger, retryMs: 5 });
    watch.watch('s1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    watch.stop();
    expect(calls).toEqual(['s1']);
  });
});
