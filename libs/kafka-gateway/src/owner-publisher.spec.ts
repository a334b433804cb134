import { Code, LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import type { PublishMessage, PublishRequest, PublishResponse, PublishResult } from '@ledgerline/proto';
import { OwnerPublisher, type PublisherClients } from './owner-publisher.js';

type Answer = PublishResult['result'];

/**
 * One Publish stream of a fake owner that binds it, as the writer owner does, to the instance of each topic
 * it first reached, and refuses every later entry of a topic whose instance was unloaded since.
 */
class FakeStream {
  readonly topicsSeen: string[] = [];
  readonly ended: Promise<void>;
  private readonly bound = new Map<string, number>();
  private endedNow!: () => void;

  constructor(private readonly owner: FakeOwner) {
    this.ended = new Promise((resolve) => (this.endedNow = resolve));
  }

  async *answer(requests: AsyncIterable<PublishRequest>): AsyncGenerator<PublishResponse> {
    for await (const request of requests) {
      const [first, ...more] = [request.message!, ...request.more].map((message) => this.store(message));
      yield {
        result: first!,
        more: more.map((result) => ({ result })),
        maxMessagesPerRequest: 8,
      } as unknown as PublishResponse;
    }
    this.endedNow();
  }

  private store(message: PublishMessage): Answer {
    const topic = message.topic;
    this.topicsSeen.push(topic);
    const instance = this.owner.instanceOf(topic);
    const bound = this.bound.get(topic) ?? instance;
    this.bound.set(topic, bound);
    if (bound !== instance) {
      return {
        case: 'failure',
        value: {
          code: Code.UNAVAILABLE,
          reason: OwnerReason.TOPIC_UNLOADED,
          message: `${topic} unloaded`,
          details: {},
        },
      } as unknown as Answer;
    }
    const offset = this.owner.append(topic);
    return { case: 'receipt', value: { firstOffset: offset, lastOffset: offset } } as unknown as Answer;
  }
}

class FakeOwner {
  readonly streams: FakeStream[] = [];
  private readonly instances = new Map<string, number>();
  private readonly offsets = new Map<string, bigint>();

  readonly clients = {
    topics: {
      publish: (requests: AsyncIterable<PublishRequest>) => {
        const stream = new FakeStream(this);
        this.streams.push(stream);
        return stream.answer(requests);
      },
    },
  } as unknown as PublisherClients;

  instanceOf(topic: string): number {
    return this.instances.get(topic) ?? 0;
  }

  unload(topic: string): void {
    this.instances.set(topic, this.instanceOf(topic) + 1);
  }

  append(topic: string): bigint {
    const offset = this.offsets.get(topic) ?? 0n;
    this.offsets.set(topic, offset + 1n);
    return offset;
  }
}

function entry(topic: string): Parameters<OwnerPublisher['publish']>[0] {
  return { topic, messages: [{ payload: Buffer.from(topic) }] };
}

describe('OwnerPublisher', () => {
  it('moves a topic the owner refused as unloaded to a new stream, keeps the others on theirs, ends the old stream once idle', async () => {
    const owner = new FakeOwner();
    const publisher = new OwnerPublisher(owner.clients, () => ({}));
    try {
      await Promise.all([publisher.publish(entry('t')), publisher.publish(entry('u'))]);
      expect(owner.streams).toHaveLength(1);

      owner.unload('t');
      await expect(publisher.publish(entry('t'))).rejects.toMatchObject({ reason: OwnerReason.TOPIC_UNLOADED });
      // The retry of a Kafka client: on a stream of its own, which reaches the reloaded topic.
      await expect(publisher.publish(entry('t'))).resolves.toMatchObject({ firstOffset: 1n });
      await expect(publisher.publish(entry('u'))).resolves.toMatchObject({ firstOffset: 1n });
      expect(owner.streams).toHaveLength(2);
      const [first, second] = owner.streams;
      expect(first!.topicsSeen).toEqual(['t', 'u', 't', 'u']);
      expect(second!.topicsSeen).toEqual(['t']);

      // A topic not seen before goes on the current (new) stream; u leaving the first stream leaves it idle.
      await expect(publisher.publish(entry('v'))).resolves.toMatchObject({ firstOffset: 0n });
      owner.unload('u');
      await expect(publisher.publish(entry('u'))).rejects.toMatchObject({ reason: OwnerReason.TOPIC_UNLOADED });
      await first!.ended;
      await expect(publisher.publish(entry('u'))).resolves.toMatchObject({ firstOffset: 2n });
      expect(second!.topicsSeen).toEqual(['t', 'v', 'u']);
      expect(owner.streams).toHaveLength(2);
    } finally {
      publisher.close();
    }
  });

  it('opens a new stream for a topic refused on its only stream and ends that one', async () => {
    const owner = new FakeOwner();
    const publisher = new OwnerPublisher(owner.clients, () => ({}));
    try {
      await publisher.publish(entry('t'));
      owner.unload('t');
      const refused = await publisher.publish(entry('t')).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(LedgerlineError);
      await expect(publisher.publish(entry('t'))).resolves.toMatchObject({ firstOffset: 1n });
      await owner.streams[0]!.ended;
      expect(owner.streams).toHaveLength(2);
    } finally {
      publisher.close();
    }
  });
});
