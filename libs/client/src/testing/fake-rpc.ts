import { LedgerlineError } from '@ledgerline/errors';
import type { CallContext } from '@ledgerline/rpc';
import type { FakeTopic } from './fake-topic.js';

/** Reasons only the fake cluster raises, for failures it stages (a dropped connection, a shutdown). */
export const FakeClusterReason = {
  UNIMPLEMENTED: 'UNIMPLEMENTED',
  CONNECTION_LOST: 'CONNECTION_LOST',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  SUBSCRIBE_FIRST: 'SUBSCRIBE_FIRST',
} as const;

/** A publish or consume stream an owner of the fake cluster serves. */
export interface OpenStream {
  readonly owner: number;
  topic: string | undefined;
  readonly abort: AbortController;
}

/** What the publish and consume sides need from the cluster: topic ownership and stream bookkeeping. */
export interface OwnerHost {
  /** The topic, checked to exist and to be owned by `owner` (else NOT_OWNER naming the owner). */
  owned(owner: number, topic: string): FakeTopic;
  openStream(owner: number, context: CallContext): OpenStream;
  closeStream(stream: OpenStream): void;
}

/** The full name of a topic, as the fake keys it. */
export function canonicalTopic(topic: string): string {
  return topic.includes('://') ? topic : `persistent://${topic}`;
}

function unimplemented(): never {
  throw new LedgerlineError(
    'UNIMPLEMENTED',
    FakeClusterReason.UNIMPLEMENTED,
    'the fake cluster does not serve this call',
  );
}

/** A service implementation whose unlisted methods fail UNIMPLEMENTED. */
export function partial<T extends object>(impl: Partial<T>): T {
  return new Proxy(impl, {
    get: (target, name) => (target as Record<string | symbol, unknown>)[name] ?? unimplemented,
  }) as T;
}

/** `promise`, or the abort reason once `signal` aborts first. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
