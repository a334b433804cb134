import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import { backOff } from 'exponential-backoff';
import { ClientReason, REROUTE_REASONS, ServiceReason } from './client-reason.js';
import type { TopicLookup } from './topic-lookup.js';

/** The reconnect bound of a client: exponential backoff with full jitter, then RECONNECT_GAVE_UP. */
export interface ReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
}

/** The owner address a NOT_OWNER refusal carries, if any. */
export function ownerAddressOf(error: LedgerlineError): string | undefined {
  const address = error.details['owner_address'] ?? error.details['ownerAddress'];
  return address === undefined || address === '' ? undefined : address;
}

/** NOT_OWNER redirects followed one after the other without a wait, before the backoff takes over (ping-pong). */
export const MAX_IMMEDIATE_REDIRECTS = 3;

function namesTheOwner(error: unknown): error is LedgerlineError {
  return (
    error instanceof LedgerlineError && error.reason === ServiceReason.NOT_OWNER && ownerAddressOf(error) !== undefined
  );
}

/**
 * Whether a failure of a call to `topic`'s owner is worth another attempt, and
 * if so, updates the lookup cache: straight to the owner a NOT_OWNER names,
 * a fresh lookup after an unload or a lost connection.
 */
export function rerouteAfter(error: unknown, topic: string, lookup: TopicLookup): boolean {
  if (!(error instanceof LedgerlineError)) return false;
  // A CA or certificate mismatch does not heal by itself: say so now rather than after every attempt.
  if (error.reason === RpcReason.TLS_HANDSHAKE_FAILED) return false;
  const owner = error.reason === ServiceReason.NOT_OWNER ? ownerAddressOf(error) : undefined;
  if (owner !== undefined) {
    lookup.learn(topic, owner);
    return true;
  }
  // The connection itself failed (refused, reset, or its keepalive went unanswered): the owner may be
  // gone, or cut off from this client only; the next lookup says so (TopicLookup.unreachableOwner).
  if (error.reason === RpcReason.TRANSPORT_UNAVAILABLE) {
    lookup.unreachableOwner(topic);
    return true;
  }
  // CANCELLED here comes from the other side: a server that closed its connections at its drain
  // bound, or a proxy that reset the stream. A producer or consumer that cancels its own call is
  // closing, and its reconnect loop stops before it asks.
  if (REROUTE_REASONS.has(error.reason) || error.code === 'UNAVAILABLE' || error.code === 'CANCELLED') {
    lookup.forget(topic);
    return true;
  }
  return error.code === 'DEADLINE_EXCEEDED';
}

/**
 * Runs `attempt` until it succeeds, a failure is not worth retrying, `stopped`
 * says the caller closed, or the policy's attempts are spent (then
 * UNAVAILABLE / RECONNECT_GAVE_UP with the last failure as its cause).
 */
export async function withReconnect<T>(
  policy: ReconnectPolicy,
  topic: string,
  lookup: TopicLookup,
  stopped: () => LedgerlineError | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  let retryable = false;
  try {
    return await backOff(
      async () => {
        for (let redirects = 0; ; redirects++) {
          const closed = stopped();
          if (closed !== undefined) throw closed;
          try {
            return await attempt();
          } catch (error) {
            // A refusal that names the owner is an answer, not a failure: go there at once, as a transfer
            // means (PIP-307), instead of after the backoff's delay. A few in a row at most, then the backoff.
            if (redirects >= MAX_IMMEDIATE_REDIRECTS || !namesTheOwner(error) || stopped() !== undefined) throw error;
            lookup.learn(topic, ownerAddressOf(error)!);
          }
        }
      },
      {
        numOfAttempts: policy.maxAttempts,
        startingDelay: policy.initialDelayMs,
        maxDelay: policy.maxDelayMs,
        jitter: 'full',
        retry: (error: unknown) => {
          retryable = stopped() === undefined && rerouteAfter(error, topic, lookup);
          return retryable;
        },
      },
    );
  } catch (error) {
    const closed = stopped();
    if (closed !== undefined) throw closed;
    if (!retryable) throw LedgerlineError.from(error);
    throw new LedgerlineError(
      'UNAVAILABLE',
      ClientReason.RECONNECT_GAVE_UP,
      `gave up reaching the owner of ${topic} after ${policy.maxAttempts} attempts: ${LedgerlineError.from(error).message}`,
      { cause: error, details: { topic } },
    );
  }
}
