import { LedgerlineError } from '@ledgerline/errors';
import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { SecurityReason } from '@ledgerline/security';
import { GatewayContext } from '../gateway-context.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { resolveKafkaGatewaySettings } from '../settings.js';
import { checkTopicConfigChanges, ConfigOperation } from '../topic-configs.js';
import { handleAlterConfigs, handleIncrementalAlterConfigs } from './alter-configs.js';
import { specGatewayContext } from '../testing/spec-context.js';

const { SET, DELETE, APPEND, SUBTRACT } = ConfigOperation;
const settings = resolveKafkaGatewaySettings({ kafkaMaxMessageBytes: 500_000 });
const session = newSession(ANONYMOUS, '127.0.0.1');

/** The namespace admin check and the topics, as the alter handlers meet them. */
class AdminBackend {
  readonly topics = new Map<string, number>([['persistent://public/default/orders', 2]]);
  refusal: LedgerlineError | undefined;

  async namespaceExists(namespace: string): Promise<boolean> {
    if (this.refusal !== undefined) throw this.refusal;
    return namespace === 'public/default';
  }

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions(topic);
    return partitions === undefined ? undefined : { name: topic, partitions, topicId: Buffer.alloc(16, 1) };
  }

  async partitions(topic: string): Promise<number | undefined> {
    return this.topics.get(topic);
  }
}

function contextOver(backend: AdminBackend): GatewayContext {
  const broker = () => ({ nodeId: 3, host: 'localhost', port: 9092 });
  return specGatewayContext(backend, { name: 'alter-configs-spec', settings, broker });
}

function request(apiKey: number, apiVersion: number, body: Message): DecodedRequest {
  return { header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' }, spec: apiSpec(apiKey)!, body };
}

/** The error code of each change list alone, checked against a topic. */
const codes = (...changes: { name: string; operation: number; value: string | null }[][]): number[] =>
  changes.map((each) => checkTopicConfigChanges(settings, each)?.errorCode ?? KafkaErrorCode.NONE);

describe('topic config changes', () => {
  it('accepts the values every topic here has, written any way Kafka reads them, and configs with no effect here', () => {
    expect(
      codes(
        [{ name: 'retention.ms', operation: SET, value: ' -1' }],
        [{ name: 'max.message.bytes', operation: SET, value: '+500000' }],
        [{ name: 'cleanup.policy', operation: SET, value: 'Delete' }],
        [{ name: 'cleanup.policy', operation: APPEND, value: 'delete' }],
        [{ name: 'min.insync.replicas', operation: DELETE, value: null }],
        [{ name: 'segment.ms', operation: SET, value: '60000' }],
        [{ name: 'follower.replication.throttled.replicas', operation: APPEND, value: '0:1' }],
      ),
    ).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('refuses another value of a config DescribeConfigs answers with POLICY_VIOLATION', () => {
    expect(
      codes(
        [{ name: 'max.message.bytes', operation: SET, value: '1000' }],
        [{ name: 'message.timestamp.type', operation: SET, value: 'LogAppendTime' }],
        [{ name: 'cleanup.policy', operation: SET, value: 'delete,compact' }],
        [{ name: 'cleanup.policy', operation: SUBTRACT, value: 'delete' }],
        [{ name: 'min.insync.replicas', operation: SET, value: '2' }],
      ),
    ).toEqual(Array(5).fill(KafkaErrorCode.POLICY_VIOLATION));
    expect(checkTopicConfigChanges(settings, [{ name: 'retention.ms', operation: SET, value: '60000' }])).toEqual({
      errorCode: KafkaErrorCode.POLICY_VIOLATION,
      errorMessage: expect.stringContaining("retention is the namespace's policy"),
    });
  });

  it("answers a Kafka broker's refusals first: INVALID_REQUEST, then INVALID_CONFIG", () => {
    expect(
      codes(
        [{ name: 'retention.ms', operation: 4, value: '-1' }],
        [
          { name: 'retention.ms', operation: SET, value: '1000' },
          { name: 'retention.ms', operation: DELETE, value: null },
        ],
        [{ name: 'retention.mss', operation: DELETE, value: null }],
        [{ name: 'retention.ms', operation: SET, value: null }],
        [{ name: 'retention.ms', operation: SET, value: '99999999999999999999' }],
        [{ name: 'compression.type', operation: SET, value: 'brotli' }],
        [{ name: 'retention.ms', operation: SUBTRACT, value: '1' }],
        [{ name: 'cleanup.policy', operation: APPEND, value: 'forever' }],
      ),
    ).toEqual([
      KafkaErrorCode.INVALID_REQUEST,
      KafkaErrorCode.INVALID_REQUEST,
      ...Array(6).fill(KafkaErrorCode.INVALID_CONFIG),
    ]);
  });
});

describe('AlterConfigs and IncrementalAlterConfigs', () => {
  const alter = async (context: GatewayContext, resourceType: number, resourceName: string): Promise<number> => {
    const body = { resources: [{ resourceType, resourceName, configs: [{ name: 'retention.ms', value: '-1' }] }] };
    const answer = await handleAlterConfigs(context, request(ApiKey.AlterConfigs, 1, body), session);
    return (answer['responses'] as { errorCode: number }[])[0]!.errorCode;
  };

  it('needs the namespace admin before it says anything of the topic (TOPIC_AUTHORIZATION_FAILED)', async () => {
    const backend = new AdminBackend();
    const context = contextOver(backend);
    expect(await alter(context, 2, 'orders')).toBe(KafkaErrorCode.NONE);
    expect(await alter(context, 2, 'nowhere')).toBe(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await alter(context, 2, 'elsewhere/ns/orders')).toBe(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await alter(context, 2, 'bad name!')).toBe(KafkaErrorCode.INVALID_TOPIC_EXCEPTION);
    backend.refusal = new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.PERMISSION_NOT_GRANTED,
      'not the tenant admin',
    );
    expect(await alter(context, 2, 'orders')).toBe(KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await alter(context, 2, 'nowhere')).toBe(KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });

  it("refuses setting a broker's static configs, and a broker other than this gateway", async () => {
    const context = contextOver(new AdminBackend());
    expect(await alter(context, 4, '3')).toBe(KafkaErrorCode.INVALID_REQUEST);
    const body = {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: [{ name: 'num.partitions', configOperation: DELETE, value: null }],
        },
        { resourceType: 4, resourceName: '9', configs: [] },
        { resourceType: 8, resourceName: '3', configs: [] },
      ],
      validateOnly: true,
    };
    const answer = await handleIncrementalAlterConfigs(
      context,
      request(ApiKey.IncrementalAlterConfigs, 1, body),
      session,
    );
    expect(answer['responses']).toEqual([
      { resourceType: 4, resourceName: '', errorCode: KafkaErrorCode.NONE, errorMessage: null },
      {
        resourceType: 4,
        resourceName: '9',
        errorCode: KafkaErrorCode.INVALID_REQUEST,
        errorMessage: 'Unexpected broker id, expected 3 or empty string, but received 9',
      },
      {
        resourceType: 8,
        resourceName: '3',
        errorCode: KafkaErrorCode.INVALID_REQUEST,
        errorMessage: expect.any(String),
      },
    ]);
  });
});
