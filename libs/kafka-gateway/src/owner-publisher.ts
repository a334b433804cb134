import { codeName, LedgerlineError } from '@ledgerline/errors';
import type { PublishReceipt, PublishResponse, PublishResult, TopicsService } from '@ledgerline/proto';
import type { CallOptions, Client } from '@ledgerline/rpc';
import { GatewayReason } from './reasons.js';

/** Entries queued for or sent on one owner's stream and not yet answered; past it a publish is refused (Kafka's clients retry). */
export const MAX_QUEUED_ENTRIES = 10_000;
/** Bytes one coalesced request carries at most (below the gRPC message bound). */
const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

/** The clients of one owner a publisher uses (the router's per-owner clients have more). */
export interface PublisherClients {
  readonly topics: Client<typeof TopicsService>;
}

type PublishMessageInit = Parameters<PublisherClients['topics']['publishOne']>[0]['message'] & object;

interface Pending {
  message: PublishMessageInit;
  bytes: number;
  resolve(receipt: PublishReceipt): void;
  reject(error: Error): void;
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
 * One Publish stream to one owner, shared by every Kafka connection of the
 * gateway: the batches that arrive while a request is being written go in
 * the next request together (message + more), up to what the owner announces,
 * as the SDK's producer coalesces them. Answers come back in request order.
 */
export class OwnerPublisher {
  private queued: Pending[] = [];
  private readonly inFlight: Pending[][] = [];
  /** Entries in inFlight: flush moves every queued entry there at once, so the bound counts both. */
  private inFlightEntries = 0;
  private requests: RequestQueue<object> | undefined;
  private abort: AbortController | undefined;
  private maxPerRequest = 1;
  private flushScheduled = false;

  constructor(
    private readonly clients: PublisherClients,
    private readonly options: () => CallOptions,
  ) {}

  publish(message: PublishMessageInit): Promise<PublishReceipt> {
    if (this.queued.length + this.inFlightEntries >= MAX_QUEUED_ENTRIES) {
      return Promise.reject(
        new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, 'too many entries queued for this owner'),
      );
    }
    const bytes = (message.messages ?? []).reduce((sum, m) => sum + (m.payload?.length ?? 0) + 64, 64);
    return new Promise((resolve, reject) => {
      this.queued.push({ message, bytes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const requests = this.requests ?? this.open();
    while (this.queued.length > 0) {
      const batch: Pending[] = [];
      let bytes = 0;
      while (
        this.queued.length > 0 &&
        batch.length < this.maxPerRequest &&
        (batch.length === 0 || bytes + this.queued[0]!.bytes <= MAX_REQUEST_BYTES)
      ) {
        const next = this.queued.shift()!;
        bytes += next.bytes;
        batch.push(next);
      }
      this.inFlight.push(batch);
      this.inFlightEntries += batch.length;
      requests.push({ message: batch[0]!.message, more: batch.slice(1).map((pending) => pending.message) });
    }
  }

  private open(): RequestQueue<object> {
    const requests = new RequestQueue<object>();
    const abort = new AbortController();
    this.requests = requests;
    this.abort = abort;
    const responses = this.clients.topics.publish(requests as AsyncIterable<never>, {
      ...this.options(),
      deadlineMs: undefined,
      signal: abort.signal,
    });
    // read() catches everything the stream throws; this catch is for a bug in it only.
    this.read(responses, requests).catch(() => requests.end());
    return requests;
  }

  private async read(responses: AsyncIterable<PublishResponse>, requests: RequestQueue<object>): Promise<void> {
    let failure: Error = new LedgerlineError(
      'UNAVAILABLE',
      GatewayReason.OWNER_NOT_REACHED,
      'the owner ended the publish stream',
    );
    try {
      for await (const response of responses) {
        if (response.maxMessagesPerRequest > this.maxPerRequest) this.maxPerRequest = response.maxMessagesPerRequest;
        const batch = this.inFlight.shift() ?? [];
        this.inFlightEntries -= batch.length;
        const results = [response.result, ...response.more.map((more) => more.result)];
        batch.forEach((pending, index) => {
          const result = results[index];
          const error = result === undefined ? failure : failureError(result);
          if (error !== undefined) pending.reject(error);
          else pending.resolve(result!.value as PublishReceipt);
        });
      }
    } catch (error) {
      failure = error instanceof Error ? error : failure;
    }
    // The stream is gone: what it had not answered fails (the caller retries where it may), and the next publish opens another.
    if (this.requests === requests) {
      this.requests = undefined;
      this.abort = undefined;
    }
    requests.end();
    this.inFlightEntries = 0;
    for (const batch of this.inFlight.splice(0)) for (const pending of batch) pending.reject(failure);
  }

  close(): void {
    this.requests?.end();
    this.abort?.abort();
    const closed = new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, 'the gateway is closing');
    for (const pending of this.queued.splice(0)) pending.reject(closed);
  }
}
