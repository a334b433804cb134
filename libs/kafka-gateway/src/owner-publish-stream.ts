import { codeName, LedgerlineError } from '@ledgerline/errors';
import type { PublishReceipt, PublishResponse, PublishResult, TopicsService } from '@ledgerline/proto';
import type { CallOptions, Client } from '@ledgerline/rpc';
import { GatewayReason } from './reasons.js';

export type PublishMessageInit = Parameters<Client<typeof TopicsService>['publishOne']>[0]['message'] & object;

/** One entry waiting for its answer. */
export interface Pending {
  readonly message: PublishMessageInit;
  readonly topic: string;
  readonly bytes: number;
  resolve(receipt: PublishReceipt): void;
  reject(error: Error): void;
}

/** What the publisher hears of one of its streams. */
export interface StreamEvents {
  /** The owner's announced bound of entries per request. */
  announced(maxPerRequest: number): void;
  /** An entry's answer, before its caller hears it: a refusal may move its topic off the stream first. */
  answered(stream: OwnerPublishStream, pending: Pending, error: Error | undefined): void;
  /** A response has been handled (the stream may now be idle). */
  settled(stream: OwnerPublishStream): void;
  /** The stream is gone; what it had in flight has been refused. */
  ended(stream: OwnerPublishStream): void;
}

/** Requests for a bidi stream, written as they come. */
class RequestQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

function failureError(result: PublishResult['result'] | PublishResponse['result']): Error | undefined {
  if (result.case !== 'failure') return undefined;
  const failure = result.value;
  return new LedgerlineError(codeName(failure.code), failure.reason, failure.message, {
    details: { ...failure.details },
  });
}

/**
 * One Publish stream to an owner: requests (message + more) go out in order and their answers come back in
 * that order. It knows which topics the publisher routes to it: the owner binds a stream to the topic
 * instance it first reached, so a topic it refused as unloaded or moved never comes back to this stream.
 */
export class OwnerPublishStream {
  /** Topics whose publishes go on this stream. */
  readonly topics = new Set<string>();
  /** Topics the owner refused on this stream as unloaded or moved: it would refuse every later entry of them. */
  readonly refused = new Set<string>();
  private readonly inFlight: Pending[][] = [];
  private readonly inFlightByTopic = new Map<string, number>();
  private entries = 0;
  private readonly requests = new RequestQueue<object>();
  private readonly abort = new AbortController();
  private halfClosed = false;

  constructor(
    topics: Client<typeof TopicsService>,
    options: CallOptions,
    private readonly events: StreamEvents,
  ) {
    const responses = topics.publish(this.requests as AsyncIterable<never>, {
      ...options,
      deadlineMs: undefined,
      signal: this.abort.signal,
    });
    // read() catches everything the stream throws; this catch is for a bug in it only.
    this.read(responses).catch(() => this.requests.end());
  }

  /** Entries sent and not answered yet. */
  get inFlightEntries(): number {
    return this.entries;
  }

  /** Whether entries of `topic` are in flight here: moving it to another stream now could reorder them. */
  hasInFlight(topic: string): boolean {
    return this.inFlightByTopic.has(topic);
  }

  /** True once half-closed: it takes nothing more. */
  get ending(): boolean {
    return this.halfClosed;
  }

  send(batch: Pending[]): void {
    this.inFlight.push(batch);
    this.entries += batch.length;
    for (const { topic } of batch) this.inFlightByTopic.set(topic, (this.inFlightByTopic.get(topic) ?? 0) + 1);
    this.requests.push({ message: batch[0]!.message, more: batch.slice(1).map((pending) => pending.message) });
  }

  /** Half-closes the stream: the owner answers what it has and ends its side, which ends the stream. */
  end(): void {
    this.halfClosed = true;
    this.requests.end();
  }

  /** Cancels the stream (the gateway is closing). */
  close(): void {
    this.end();
    this.abort.abort();
  }

  private answeredOne(topic: string): void {
    const left = (this.inFlightByTopic.get(topic) ?? 1) - 1;
    if (left > 0) this.inFlightByTopic.set(topic, left);
    else this.inFlightByTopic.delete(topic);
  }

  private async read(responses: AsyncIterable<PublishResponse>): Promise<void> {
    let failure: Error = new LedgerlineError(
      'UNAVAILABLE',
      GatewayReason.OWNER_NOT_REACHED,
      'the owner ended the publish stream',
    );
    try {
      for await (const response of responses) {
        this.events.announced(response.maxMessagesPerRequest);
        const batch = this.inFlight.shift() ?? [];
        this.entries -= batch.length;
        const results = [response.result, ...response.more.map((more) => more.result)];
        batch.forEach((pending, index) => {
          const result = results[index];
          const error = result === undefined ? failure : failureError(result);
          this.answeredOne(pending.topic);
          this.events.answered(this, pending, error);
          if (error !== undefined) pending.reject(error);
          else pending.resolve(result!.value as PublishReceipt);
        });
        this.events.settled(this);
      }
    } catch (error) {
      failure = error instanceof Error ? error : failure;
    }
    // The stream is gone: what it had not answered fails (the caller retries where it may).
    this.halfClosed = true;
    this.requests.end();
    this.entries = 0;
    this.inFlightByTopic.clear();
    const unanswered = this.inFlight.splice(0);
    this.events.ended(this);
    for (const batch of unanswered) for (const pending of batch) pending.reject(failure);
  }
}
