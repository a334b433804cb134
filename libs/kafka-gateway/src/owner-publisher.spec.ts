import { Code, LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import type { PublishMessage, PublishRequest, PublishResponse, PublishResult } from '@ledgerline/proto';
import { OwnerPublisher, type PublisherClients } from './owner-publisher.js';
import { GatewayReason } from './reasons.js';

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
      if (this.owner.goneOnNext) {
        this.owner.goneOnNext = false;
        this.endedNow();
        throw new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, 'the owner went away');
      }
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
      // After a transfer away and back the old instance names the owner it went to: NOT_OWNER.
      const reason = this.owner.leftWith.get(topic) ?? OwnerReason.TOPIC_UNLOADED;
      return {
        case: 'failure',
        value: {
          code: Code.UNAVAILABLE,
          reason,
          message: `${topic} left this stream`,
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
  /** What an unloaded topic's entries are refused with on a stream bound to its old instance. */
  readonly leftWith = new Map<string, string>();
  /** The next request read fails its stream, as when the owner goes away. */
  goneOnNext = false;
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

  unload(topic: string, reason: string = OwnerReason.TOPIC_UNLOADED): void {
    this.leftWith.set(topic, reason);
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

  it('forgets the streams of idle topics past its bound, so an old stream whose topics went quiet is ended', async () => {
    const owner = new FakeOwner();
    const publisher = new OwnerPublisher(owner.clients, () => ({}), 2);
    try {
      await Promise.all([publisher.publish(entry('t')), publisher.publish(entry('u'))]);
      owner.unload('t');
      await expect(publisher.publish(entry('t'))).rejects.toMatchObject({ reason: OwnerReason.TOPIC_UNLOADED });
      await expect(publisher.publish(entry('t'))).resolves.toMatchObject({ firstOffset: 1n });
      const [first, second] = owner.streams;
      // u, quiet, still holds the first stream open; topics past the bound make the publisher forget it.
      await expect(publisher.publish(entry('v'))).resolves.toMatchObject({ firstOffset: 0n });
      await expect(publisher.publish(entry('w'))).resolves.toMatchObject({ firstOffset: 0n });
      await first!.ended;
      // Forgotten, u goes on the current stream.
      await expect(publisher.publish(entry('u'))).resolves.toMatchObject({ firstOffset: 1n });
      expect(second!.topicsSeen).toEqual(['t', 'v', 'w', 'u']);
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

  it('moves a topic refused NOT_OWNER (transferred away and back) to a new stream too', async () => {
    const owner = new FakeOwner();
    const publisher = new OwnerPublisher(owner.clients, () => ({}));
    try {
      await publisher.publish(entry('t'));
      owner.unload('t', OwnerReason.NOT_OWNER);
      await expect(publisher.publish(entry('t'))).rejects.toMatchObject({ reason: OwnerReason.NOT_OWNER });
      await expect(publisher.publish(entry('t'))).resolves.toMatchObject({ firstOffset: 1n });
      expect(owner.streams).toHaveLength(2);
    } finally {
      publisher.close();
    }
  });

  it('fails what a stream had in flight when it ends, and opens another for the next publish of its topics', async () => {
    const owner = new FakeOwner();
    const publisher = new OwnerPublisher(owner.clients, () => ({}));
    try {
      await Promise.all([publisher.publish(entry('t')), publisher.publish(entry('u'))]);
      owner.goneOnNext = true;
      await expect(publisher.publish(entry('t'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await expect(Promise.all([publisher.publish(entry('t')), publisher.publish(entry('u'))])).resolves.toEqual([
        expect.objectContaining({ firstOffset: 1n }),
        expect.objectContaining({ firstOffset: 1n }),
      ]);
      expect(owner.streams).toHaveLength(2);
      expect(owner.streams[1]!.topicsSeen).toEqual(['t', 'u']);
    } finally {
      publisher.close();
    }
  });
});
