import { LedgerlineError } from '@ledgerline/errors';
import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest } from '@ledgerline/kafka-protocol';
import { OwnerReason } from '@ledgerline/ownership';
import { SecurityReason } from '@ledgerline/security';
import { GatewayContext } from '../gateway-context.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { handleDeleteRecords } from './delete-records.js';
import { specGatewayContext } from '../testing/spec-context.js';

/** The managed ledger's reason for an offset past the end, as it reaches the gateway (which imports no owner lib). */
const OwnerLedgerReason = { OFFSET_OUT_OF_RANGE: 'OFFSET_OUT_OF_RANGE' } as const;

/** One topic of 2 partitions whose owner answers deletions with `refusal`, or the offset asked for. */
class RecordsBackend {
  refusal: LedgerlineError | undefined;
  readonly asked: [string, bigint][] = [];

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions(topic);
    return partitions === undefined ? undefined : { name: topic, partitions, topicId: Buffer.alloc(16, 1) };
  }

  async partitions(topic: string): Promise<number | undefined> {
    return topic === 'persistent://public/default/orders' ? 2 : undefined;
  }

  async deleteRecords(topic: string, offset: bigint): Promise<bigint> {
    if (this.refusal !== undefined) throw this.refusal;
    this.asked.push([topic, offset]);
    return offset === -1n ? 10n : offset;
  }
}

function contextOver(backend: RecordsBackend): GatewayContext {
  return specGatewayContext(backend, { name: 'delete-records-spec' });
}

function request(partitions: { partitionIndex: number; offset: bigint }[], name = 'orders'): DecodedRequest {
  return {
    header: { apiKey: ApiKey.DeleteRecords, apiVersion: 1, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(ApiKey.DeleteRecords)!,
    body: { topics: [{ name, partitions }], timeoutMs: 1000 },
  };
}

/** [lowWatermark, errorCode] of each partition. */
async function deleteRecords(context: GatewayContext, asked: DecodedRequest): Promise<[bigint, number][]> {
  const answer = await handleDeleteRecords(context, asked, newSession(ANONYMOUS, '127.0.0.1'));
  const [topic] = answer['topics'] as { partitions: { lowWatermark: bigint; errorCode: number }[] }[];
  return topic!.partitions.map((partition) => [partition.lowWatermark, partition.errorCode]);
}

describe('DeleteRecords', () => {
  it("asks each partition's owner, -1 included, and refuses bad offsets and partitions before asking", async () => {
    const backend = new RecordsBackend();
    const answers = await deleteRecords(
      contextOver(backend),
      request([
        { partitionIndex: 1, offset: 4n },
        { partitionIndex: 0, offset: -1n },
        { partitionIndex: 0, offset: -2n },
        { partitionIndex: 0, offset: 2n ** 60n },
        { partitionIndex: 2, offset: 1n },
      ]),
    );
    expect(answers).toEqual([
      [4n, KafkaErrorCode.NONE],
      [10n, KafkaErrorCode.NONE],
      [-1n, KafkaErrorCode.OFFSET_OUT_OF_RANGE],
      [-1n, KafkaErrorCode.OFFSET_OUT_OF_RANGE],
      [-1n, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    expect(backend.asked).toEqual([
      ['persistent://public/default/orders-partition-1', 4n],
      ['persistent://public/default/orders-partition-0', -1n],
    ]);
    expect(
      await deleteRecords(contextOver(backend), request([{ partitionIndex: 0, offset: 1n }], 'bad name!')),
    ).toEqual([[-1n, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
  });

  it("answers the owner's refusals in Kafka's terms", async () => {
    const backend = new RecordsBackend();
    const context = contextOver(backend);
    const refused = async (refusal: LedgerlineError) => {
      backend.refusal = refusal;
      return (await deleteRecords(context, request([{ partitionIndex: 0, offset: 1n }])))[0];
    };
    expect(
      await refused(new LedgerlineError('OUT_OF_RANGE', OwnerLedgerReason.OFFSET_OUT_OF_RANGE, 'past the end')),
    ).toEqual([-1n, KafkaErrorCode.OFFSET_OUT_OF_RANGE]);
    expect(
      await refused(new LedgerlineError('PERMISSION_DENIED', SecurityReason.TENANT_ADMIN_REQUIRED, 'not the admin')),
    ).toEqual([-1n, KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(await refused(new LedgerlineError('FAILED_PRECONDITION', OwnerReason.READONLY_TOPIC, 'reader'))).toEqual([
      -1n,
      KafkaErrorCode.POLICY_VIOLATION,
    ]);
  });
});
