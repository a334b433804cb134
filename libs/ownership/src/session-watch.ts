import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import type { MetadataClients } from './metadata-clients.js';

/** How long after a watch ended the next one opens: a metadata restart is not hammered. */
export const SESSION_WATCH_RETRY_MS = 1_000;

export interface SessionWatchOptions {
  clients: MetadataClients;
  logger: { warn(details: object, message: string): void; info?(details: object, message: string): void };
  retryMs?: number;
}

/**
 * Holds the WatchOwnerSession stream of the owner's current session open. The
 * stream carries nothing the owner needs: it exists so that the metadata
 * service notices at once when this process's connection to it goes, and can
 * then check whether the process is gone (docs/failover.md). A stream that
 * ends is opened again after `retryMs` while the session is the same; a new
 * session replaces it.
 */
export class SessionWatch {
  private current: { sessionId: string; abort: AbortController } | undefined;
  private armed = false;

  constructor(private readonly options: SessionWatchOptions) {}

  /** True while the metadata service answered that this session may expire early. */
  get earlyExpiryArmed(): boolean {
    return this.armed;
  }

  /** Watches `sessionId` from now on (ending the watch of any other session). */
  watch(sessionId: string): void {
    if (this.current?.sessionId === sessionId) return;
    this.stop();
    const abort = new AbortController();
    this.current = { sessionId, abort };
    this.hold(sessionId, abort.signal).catch(unexpectedRejection);
  }

  stop(): void {
    this.current?.abort.abort();
    this.current = undefined;
    this.armed = false;
  }

  private async hold(sessionId: string, signal: AbortSignal): Promise<void> {
    const retryMs = this.options.retryMs ?? SESSION_WATCH_RETRY_MS;
    while (!signal.aborted) {
      try {
        for await (const answer of this.options.clients.lookup.watchOwnerSession({ sessionId }, { signal })) {
          this.armed = answer.earlyExpiryArmed;
        }
        // The metadata instance ended it (it is draining): not armed until a new watch says so.
        this.armed = false;
      } catch (thrown) {
        const error = LedgerlineError.from(thrown);
        this.armed = false;
        if (signal.aborted) return;
        // An expired session is the keep-alive's to notice and replace; watching it again is pointless.
        if (error.reason === MetadataServiceReason.SESSION_EXPIRED) return;
        // A metadata service from before WatchOwnerSession (a rolling upgrade): the TTL alone it is.
        if (error.code === 'UNIMPLEMENTED') return;
        this.options.logger.warn({ err: error.message }, 'owner session watch ended; opening it again');
      }
      await sleep(retryMs, signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
