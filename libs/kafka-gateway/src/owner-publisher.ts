import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import type { PublishReceipt, TopicsService } from '@ledgerline/proto';
import type { CallOptions, Client } from '@ledgerline/rpc';
import {
  OwnerPublishStream,
  type Pending,
  type PublishMessageInit,
  type StreamEvents,
} from './owner-publish-stream.js';
import { GatewayReason } from './reasons.js';

/** Entries queued for or sent on one owner's streams and not yet answered; past it a publish is refused (Kafka's clients retry). */
export const MAX_QUEUED_ENTRIES = 10_000;
/** Topics the publisher remembers the stream of, by default; past it, those with nothing in flight are forgotten. */
export const MAX_BOUND_TOPICS = 10_000;
/** Topics the owner may refuse on the current stream before a fresh stream replaces it as the current one. */
const MAX_REFUSED_TOPICS_PER_STREAM = 1_000;
/** Bytes one coalesced request carries at most (below the gRPC message bound). */
const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

/** The clients of one owner a publisher uses (the router's per-owner clients have more). */
export interface PublisherClients {
  readonly topics: Client<typeof TopicsService>;
}

/** Refusals by which the owner says a topic left a stream's binding: that stream refuses all its later entries. */
function leftBinding(error: Error | undefined): boolean {
  return (
    error instanceof LedgerlineError &&
    (error.reason === OwnerReason.TOPIC_UNLOADED || error.reason === OwnerReason.NOT_OWNER)
  );
}

/**
 * The Publish streams of the gateway to one owner, shared by every Kafka connection: the batches that
 * arrive while a request is being written go in the next request together (message + more), up to what
 * the owner announces, as the SDK's producer coalesces them. Answers come back in request order.
 *
 * Topics share one current stream, but the owner keeps a stream bound to the topic instance it first
 * reached and, once that instance is unloaded, refuses every later entry of the topic on that stream
 * (so a producer's later entries cannot land ahead of its resends). So each topic is bound to the stream
 * it is published on, and a topic refused as unloaded or moved goes to another stream from then on:
 * only that topic, as moving one with entries in flight could reorder them. A stream that is no longer
 * the current one is ended once no topic is bound to it and nothing is in flight.
 */
export class OwnerPublisher implements StreamEvents {
  private queued: Pending[] = [];
  private readonly streams = new Set<OwnerPublishStream>();
  private readonly bindings = new Map<string, OwnerPublishStream>();
  /** The stream topics not bound yet go to. */
  private current: OwnerPublishStream | undefined;
  private maxPerRequest = 1;
  private flushScheduled = false;

  constructor(
    private readonly clients: PublisherClients,
    private readonly options: () => CallOptions,
    private readonly maxBoundTopics = MAX_BOUND_TOPICS,
  ) {}

  publish(message: PublishMessageInit): Promise<PublishReceipt> {
    let entries = this.queued.length;
    for (const stream of this.streams) entries += stream.inFlightEntries;
    if (entries >= MAX_QUEUED_ENTRIES) {
      return Promise.reject(
        new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, 'too many entries queued for this owner'),
      );
    }
    const bytes = (message.messages ?? []).reduce((sum, m) => sum + (m.payload?.length ?? 0) + 64, 64);
    const topic = message.topic ?? '';
    return new Promise((resolve, reject) => {
      this.queued.push({ message, topic, bytes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const perStream = new Map<OwnerPublishStream, Pending[]>();
    for (const pending of this.queued.splice(0)) {
      const stream = this.streamFor(pending.topic);
      const list = perStream.get(stream);
      if (list === undefined) perStream.set(stream, [pending]);
      else list.push(pending);
    }
    for (const [stream, list] of perStream) this.sendCoalesced(stream, list);
  }

  private sendCoalesced(stream: OwnerPublishStream, queued: Pending[]): void {
    while (queued.length > 0) {
      const batch: Pending[] = [];
      let bytes = 0;
      while (
        queued.length > 0 &&
        batch.length < this.maxPerRequest &&
        (batch.length === 0 || bytes + queued[0]!.bytes <= MAX_REQUEST_BYTES)
      ) {
        const next = queued.shift()!;
        bytes += next.bytes;
        batch.push(next);
      }
      stream.send(batch);
    }
  }

  /** The stream `topic` is bound to, binding it to the current one (opened when needed) if none. */
  private streamFor(topic: string): OwnerPublishStream {
    const bound = this.bindings.get(topic);
    if (bound !== undefined) return bound;
    let stream = this.current;
    if (stream === undefined || stream.refused.has(topic)) {
      stream = new OwnerPublishStream(this.clients.topics, this.options(), this);
      this.streams.add(stream);
      const previous = this.current;
      this.current = stream;
      if (previous !== undefined) this.endIfIdle(previous);
    }
    stream.topics.add(topic);
    this.bindings.set(topic, stream);
    if (this.bindings.size > this.maxBoundTopics) this.forgetIdleBindings();
    return stream;
  }

  /**
   * Forgets the oldest bindings of topics with nothing in flight, down to 90% of the bound (a topic with
   * entries in flight keeps its stream: another could reorder them). A forgotten topic's next publish goes
   * on the current stream, and a stream left with no topic and nothing in flight is ended.
   */
  private forgetIdleBindings(): void {
    const target = Math.floor(this.maxBoundTopics * 0.9);
    const left = new Set<OwnerPublishStream>();
    for (const [topic, stream] of this.bindings) {
      if (this.bindings.size <= target) break;
      if (stream.hasInFlight(topic)) continue;
      this.bindings.delete(topic);
      stream.topics.delete(topic);
      left.add(stream);
    }
    for (const stream of left) this.endIfIdle(stream);
  }

  private endIfIdle(stream: OwnerPublishStream): void {
    if (stream !== this.current && stream.topics.size === 0 && stream.inFlightEntries === 0 && !stream.ending) {
      stream.end();
    }
  }

  announced(maxPerRequest: number): void {
    if (maxPerRequest > this.maxPerRequest) this.maxPerRequest = maxPerRequest;
  }

  answered(stream: OwnerPublishStream, pending: Pending, error: Error | undefined): void {
    if (!leftBinding(error)) return;
    // Before the caller hears it: its retry must already find the topic off this stream.
    stream.refused.add(pending.topic);
    // The topic may be on another stream already: a refusal of an earlier entry moved it there.
    if (this.bindings.get(pending.topic) === stream) this.bindings.delete(pending.topic);
    stream.topics.delete(pending.topic);
    // What a current stream remembers of refused topics stays bounded: past the bound a fresh one takes its place.
    if (stream === this.current && stream.refused.size >= MAX_REFUSED_TOPICS_PER_STREAM) this.current = undefined;
  }

  settled(stream: OwnerPublishStream): void {
    this.endIfIdle(stream);
  }

  ended(stream: OwnerPublishStream): void {
    this.streams.delete(stream);
    for (const topic of stream.topics) this.bindings.delete(topic);
    stream.topics.clear();
    // The next publish of a topic it had opens another.
    if (this.current === stream) this.current = undefined;
  }

  close(): void {
    // A copy: a stream leaves the set once its reading ends.
    for (const stream of [...this.streams]) stream.close();
    const closed = new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, 'the gateway is closing');
    for (const pending of this.queued.splice(0)) pending.reject(closed);
  }
}
