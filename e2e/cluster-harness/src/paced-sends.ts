import { createClient, type LedgerlineClient, type Producer } from '@ledgerline/client';
import type { LocalCluster } from '@ledgerline/cluster';
import type { Ack } from './ack-check.js';

/**
 * A client for a load across owner changes: it reconnects at most 100 ms
 * apart, so what a bench or spec measures is the failover or hand-over, not
 * the client's backoff.
 */
export function loadClient(cluster: LocalCluster): LedgerlineClient {
  return createClient({ serviceUrl: cluster.metadataTarget, maxReconnectAttempts: 600, reconnectMaxDelayMs: 100 });
}

export interface PacedSends {
  /** The pause between two sends' starts. */
  intervalMs: number;
  /** Sends in flight at once at most: a stalled owner holds this many, and the pacing waits. */
  maxInFlight: number;
  /** Sending goes on while this holds. */
  running: () => boolean;
  /** Where each acknowledgement goes, with its latency. */
  acks: Ack[];
  /** Told of each send that failed. */
  failed: (payload: string, error: unknown) => void;
}

/**
 * Sends `m0`, `m1`, ... through `producer` at a steady rate until told to
 * stop, recording each acknowledgement and its latency; resolves once every
 * send in flight is answered.
 */
export async function sendPaced(producer: Producer, paced: PacedSends): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let next = performance.now();
  for (let sent = 0; paced.running(); sent++) {
    const payload = `m${sent}`;
    const startedMs = performance.now();
    const tracked: Promise<void> = producer
      .send(payload)
      .then(
        ({ offset, duplicate }) => {
          paced.acks.push({ payload, offset, duplicate, atMs: Date.now(), latencyMs: performance.now() - startedMs });
        },
        (error: unknown) => paced.failed(payload, error),
      )
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= paced.maxInFlight) await Promise.race(inFlight);
    next += paced.intervalMs;
    const waitMs = next - performance.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    else next = performance.now();
  }
  await Promise.all(inFlight);
}
