import { LedgerlineError } from '@ledgerline/errors';
import { ApiKey, apiSpec, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import { OwnerReason } from '@ledgerline/ownership';
import { SecurityReason } from '@ledgerline/security';
import type { ProducerMark } from '../backend-types.js';
import { GatewayContext } from '../gateway-context.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { handleDescribeProducers } from './describe-producers.js';
import { specGatewayContext } from '../testing/spec-context.js';

/** Topics of one partition each, whose owners know these producers (or fail as `failure` says). */
class ProducersBackend {
  marks: ProducerMark[] = [];
  failure: LedgerlineError | undefined;
  readonly asked: string[] = [];

  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    return topic.endsWith('/missing') ? undefined : { name: topic, partitions: 1, topicId: Buffer.alloc(16, 1) };
  }

  async producers(topic: string): Promise<ProducerMark[]> {
    this.asked.push(topic);
    if (this.failure !== undefined) throw this.failure;
    return this.marks;
  }
}

function contextOver(backend: ProducersBackend): GatewayContext {
  return specGatewayContext(backend, { name: 'describe-producers-spec' });
}

async function describe0(backend: ProducersBackend, topics: { name: string; partitionIndexes: number[] }[]) {
  const context = contextOver(backend);
  try {
    const request = {
      header: { apiKey: ApiKey.DescribeProducers, apiVersion: 0, correlationId: 1, clientId: 'spec' },
      spec: apiSpec(ApiKey.DescribeProducers)!,
      body: { topics },
    };
    const answer = await handleDescribeProducers(context, request, newSession(ANONYMOUS, '127.0.0.1'));
    return (answer['topics'] as { partitions: Message[] }[]).map((topic) => topic.partitions);
  } finally {
    context.groups.close();
  }
}

describe('DescribeProducers', () => {
  it("answers Kafka's producers only, with the owner's last sequence id (wrapped as Kafka's) and time", async () => {
    const backend = new ProducersBackend();
    backend.marks = [
      { name: 'sdk-writer', lastSequenceId: 9n, lastPublishTimeMs: 5n },
      { name: 'kafka-12-3', lastSequenceId: 41n, lastPublishTimeMs: 1_700_000_000_000n },
      { name: 'kafka-13-0', lastSequenceId: 2n ** 31n + 4n, lastPublishTimeMs: 0n },
      { name: 'kafka-x-0', lastSequenceId: 1n, lastPublishTimeMs: 0n },
    ];
    const [partitions] = await describe0(backend, [{ name: 'orders', partitionIndexes: [0] }]);
    expect(backend.asked).toEqual(['persistent://public/default/orders-partition-0']);
    expect(partitions).toEqual([
      {
        partitionIndex: 0,
        errorCode: KafkaErrorCode.NONE,
        errorMessage: null,
        activeProducers: [
          {
            producerId: 12n,
            producerEpoch: 3,
            lastSequence: 41,
            lastTimestamp: 1_700_000_000_000n,
            coordinatorEpoch: -1,
            currentTxnStartOffset: -1n,
          },
          {
            producerId: 13n,
            producerEpoch: 0,
            lastSequence: 4,
            lastTimestamp: -1n,
            coordinatorEpoch: -1,
            currentTxnStartOffset: -1n,
          },
        ],
      },
    ]);
  });

  it('answers unknown topics and partitions, bad names, refusals and owner moves with Kafka codes', async () => {
    const backend = new ProducersBackend();
    const codes = async (name: string, partition = 0) =>
      (await describe0(backend, [{ name, partitionIndexes: [partition] }]))[0]!.map((each) => each['errorCode']);
    expect(await codes('missing')).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await codes('orders', 1)).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await codes('not a name!')).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    backend.failure = new LedgerlineError('PERMISSION_DENIED', SecurityReason.PERMISSION_NOT_GRANTED, 'no consume');
    expect(await codes('orders')).toEqual([KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    backend.failure = new LedgerlineError('UNAVAILABLE', OwnerReason.TOPIC_UNLOADED, 'moving');
    expect(await codes('orders')).toEqual([KafkaErrorCode.REQUEST_TIMED_OUT]);
  });
});
