import { LedgerlineError } from '@ledgerline/errors';
import { ClientReason, ServiceReason } from './client-reason.js';
import { MAX_IMMEDIATE_REDIRECTS, withReconnect } from './reconnect.js';
import type { TopicLookup } from './topic-lookup.js';

/*
 * A NOT_OWNER that names the owner (a transfer's answer, PIP-307) is followed
 * at once. A stream that ends after answering something reconnects at once
 * anyway; one refused before answering anything (a route that went stale, a
 * topic that moved again) waited the reconnect backoff first (up to the
 * initial delay, with full jitter). Other failures still wait, and redirects
 * that keep coming fall back to the backoff.
 */

const TOPIC = 'persistent://t/ns/moved';
/** So long that a wait the backoff adds shows: full jitter waits 0..this, under 1 s with 1 chance in 60. */
const SLOW_POLICY = { initialDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 5 };

function notOwner(address: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', ServiceReason.NOT_OWNER, `${TOPIC} is served by ${address}`, {
    details: { topic: TOPIC, owner_address: address },
  });
}

function recordingLookup(): TopicLookup & { learned: string[] } {
  const learned: string[] = [];
  return {
    learned,
    learn: (_topic: string, address: string) => learned.push(address),
    forget: () => undefined,
  } as never;
}

describe('withReconnect', () => {
  it('goes straight to the owner a NOT_OWNER names, without the backoff', async () => {
    const lookup = recordingLookup();
    let attempts = 0;
    const startedMs = Date.now();
    const answer = await withReconnect(
      SLOW_POLICY,
      TOPIC,
      lookup,
      () => undefined,
      async () => {
        attempts++;
        if (attempts === 1) throw notOwner('10.0.0.2:6650');
        return 'served';
      },
    );
    expect(answer).toBe('served');
    expect(attempts).toBe(2);
    expect(lookup.learned).toEqual(['10.0.0.2:6650']);
    expect(Date.now() - startedMs).toBeLessThan(1_000);
  });

  it('falls back to the backoff after MAX_IMMEDIATE_REDIRECTS redirects in a row, and gives up at its bound', async () => {
    const lookup = recordingLookup();
    let attempts = 0;
    const failure = await withReconnect(
      { initialDelayMs: 50, maxDelayMs: 50, maxAttempts: 2 },
      TOPIC,
      lookup,
      () => undefined,
      async () => {
        attempts++;
        throw notOwner(`10.0.0.${attempts}:6650`);
      },
    ).catch((thrown: unknown) => LedgerlineError.from(thrown));
    // Each of the backoff's two attempts: the first try and its immediate redirects.
    expect(attempts).toBe(2 * (MAX_IMMEDIATE_REDIRECTS + 1));
    expect(failure).toMatchObject({ code: 'UNAVAILABLE', reason: ClientReason.RECONNECT_GAVE_UP });
  });
});
