import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { KafkaGatewaySettings } from './settings.js';

/** How Kafka types a topic config's value (org.apache.kafka.common.config.ConfigDef.Type). */
type ConfigType = 'boolean' | 'int' | 'long' | 'double' | 'string' | 'list' | readonly string[];

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Every topic config a Kafka 3.x broker knows (org.apache.kafka.common.config.TopicConfig),
 * with its type; the enumerations list their valid values. Ledgerline keeps
 * none of them on a topic (its storage is the ledger store's, its retention
 * the namespace's policies): a known config with a well-typed value is
 * accepted and has no effect, as the replication factor has none; DescribeConfigs
 * answers how topics here behave.
 */
const TOPIC_CONFIGS: ReadonlyMap<string, ConfigType> = new Map<string, ConfigType>([
  ['cleanup.policy', 'list'],
  ['compression.type', ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer']],
  ['delete.retention.ms', 'long'],
  ['file.delete.delay.ms', 'long'],
  ['flush.messages', 'long'],
  ['flush.ms', 'long'],
  ['follower.replication.throttled.replicas', 'list'],
  ['index.interval.bytes', 'int'],
  ['leader.replication.throttled.replicas', 'list'],
  ['local.retention.bytes', 'long'],
  ['local.retention.ms', 'long'],
  ['max.compaction.lag.ms', 'long'],
  ['max.message.bytes', 'int'],
  ['message.downconversion.enable', 'boolean'],
  ['message.format.version', 'string'],
  ['message.timestamp.after.max.ms', 'long'],
  ['message.timestamp.before.max.ms', 'long'],
  ['message.timestamp.difference.max.ms', 'long'],
  ['message.timestamp.type', ['CreateTime', 'LogAppendTime']],
  ['min.cleanable.dirty.ratio', 'double'],
  ['min.compaction.lag.ms', 'long'],
  ['min.insync.replicas', 'int'],
  ['preallocate', 'boolean'],
  ['remote.log.copy.disable', 'boolean'],
  ['remote.log.delete.on.disable', 'boolean'],
  ['remote.storage.enable', 'boolean'],
  ['retention.bytes', 'long'],
  ['retention.ms', 'long'],
  ['segment.bytes', 'int'],
  ['segment.index.bytes', 'int'],
  ['segment.jitter.ms', 'long'],
  ['segment.ms', 'long'],
  ['unclean.leader.election.enable', 'boolean'],
]);

/** cleanup.policy's values; a list of them, comma-separated. */
const CLEANUP_POLICIES = new Set(['compact', 'delete']);

function wellTyped(name: string, type: ConfigType, value: string): boolean {
  const trimmed = value.trim();
  if (typeof type !== 'string') return type.includes(trimmed);
  switch (type) {
    case 'boolean':
      return /^(true|false)$/i.test(trimmed);
    case 'int':
      return /^[-+]?\d{1,10}$/.test(trimmed) && Number(trimmed) >= INT32_MIN && Number(trimmed) <= INT32_MAX;
    case 'long':
      return /^[-+]?\d{1,19}$/.test(trimmed) && BigInt(trimmed) >= INT64_MIN && BigInt(trimmed) <= INT64_MAX;
    case 'double':
      return trimmed !== '' && Number.isFinite(Number(trimmed));
    case 'list':
      return (
        name !== 'cleanup.policy' ||
        trimmed.split(',').every((policy) => CLEANUP_POLICIES.has(policy.trim().toLowerCase()))
      );
    default:
      return true;
  }
}

/** Why a config of CreateTopics is refused: INVALID_CONFIG and Kafka's message. */
export interface ConfigRefusal {
  readonly errorCode: number;
  readonly errorMessage: string;
}

/**
 * Checks a CreateTopics topic's configs as a Kafka broker does: a name it
 * does not know, a null value, or a value that is not of the config's type
 * is INVALID_CONFIG; undefined when every config holds.
 */
export function checkTopicConfigs(
  configs: readonly { name: string; value: string | null }[],
): ConfigRefusal | undefined {
  for (const { name, value } of configs) {
    const type = TOPIC_CONFIGS.get(name);
    if (type === undefined) return invalid(`Unknown topic config name: ${name}`);
    if (value === null) return invalid(`Null value not supported for topic configs: ${name}`);
    if (!wellTyped(name, type, value)) return invalid(`Invalid value ${value} for configuration ${name}`);
  }
  return undefined;
}

function invalid(errorMessage: string): ConfigRefusal {
  return { errorCode: KafkaErrorCode.INVALID_CONFIG, errorMessage };
}

/** DescribeConfigs' and the alter APIs' resource types (org.apache.kafka.common.config.ConfigResource.Type). */
export const TOPIC_RESOURCE = 2;
export const BROKER_RESOURCE = 4;

/**
 * The topic configs that say how a topic here behaves, the value every topic
 * has, and what decides it instead of the topic: DescribeConfigs answers
 * these, and the alter APIs refuse to set any of them to another value.
 */
function behaviour(settings: KafkaGatewaySettings): ReadonlyMap<string, { value: string; decidedBy: string }> {
  return new Map([
    ['cleanup.policy', { value: 'delete', decidedBy: 'topics are never compacted; retention removes old ledgers' }],
    ['compression.type', { value: 'producer', decidedBy: "a batch is stored as its producer's records" }],
    [
      'max.message.bytes',
      {
        value: String(settings.kafkaMaxMessageBytes),
        decidedBy: "the gateway's kafkaMaxMessageBytes bounds every batch",
      },
    ],
    ['message.timestamp.type', { value: 'CreateTime', decidedBy: 'a record keeps the timestamp its producer gave' }],
    ['min.insync.replicas', { value: '1', decidedBy: "the ledger store's write quorum decides durability" }],
    [
      'retention.ms',
      {
        value: '-1',
        decidedBy: "retention is the namespace's policy (ledgerline namespaces update --retention-minutes)",
      },
    ],
  ]);
}

/** What DescribeConfigs answers for a topic or a broker: how topics here behave, and the gateway's settings. */
export function describedConfigs(settings: KafkaGatewaySettings, resourceType: number): Record<string, string> {
  const maxMessageBytes = String(settings.kafkaMaxMessageBytes);
  if (resourceType === TOPIC_RESOURCE) {
    return Object.fromEntries([...behaviour(settings)].map(([name, { value }]) => [name, value]));
  }
  return {
    'auto.create.topics.enable': String(settings.kafkaAutoCreateTopics),
    'num.partitions': String(settings.kafkaDefaultPartitions),
    'message.max.bytes': maxMessageBytes,
    'socket.request.max.bytes': String(settings.kafkaMaxFrameSizeBytes),
    'group.min.session.timeout.ms': String(settings.groupMinSessionTimeoutMs),
    'group.max.session.timeout.ms': String(settings.groupMaxSessionTimeoutMs),
    'group.initial.rebalance.delay.ms': String(settings.groupInitialRebalanceDelayMs),
    'offset.metadata.max.bytes': String(settings.kafkaOffsetMetadataMaxLength),
  };
}

/** IncrementalAlterConfigs' operations (AlterConfigOp.OpType). */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

/** One change a topic's configs are asked for: AlterConfigs' are all SET. */
export interface ConfigChange {
  readonly name: string;
  readonly operation: number;
  readonly value: string | null;
}

function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Whether two values of a config of this type say the same: lists as sets, numbers as numbers. */
function sameValue(type: ConfigType, a: string, b: string): boolean {
  if (type === 'list') {
    const left = new Set(listOf(a.toLowerCase()));
    const right = new Set(listOf(b.toLowerCase()));
    return left.size === right.size && [...left].every((item) => right.has(item));
  }
  if (type === 'int' || type === 'long') return BigInt(a.trim()) === BigInt(b.trim());
  if (type === 'boolean') return a.trim().toLowerCase() === b.trim().toLowerCase();
  return a.trim() === b.trim();
}

/**
 * Checks the changes asked of a topic's configs as a Kafka broker checks
 * them, then against what Ledgerline can honour. A Kafka broker's refusals
 * first: an operation IncrementalAlterConfigs does not define and a config
 * named twice are INVALID_REQUEST; a name Kafka's topic configs do not
 * include, a null value to set, a value not of the config's type, and APPEND
 * or SUBTRACT of a config that is not a list are INVALID_CONFIG. No topic
 * config has a per-topic policy here to apply it to, so nothing is ever
 * changed: a config DescribeConfigs answers (how every topic here behaves)
 * may be set only to the value it has, or deleted (back to that same
 * default), and any other value is POLICY_VIOLATION naming what decides it
 * instead; the other configs tune a Kafka broker's log segments and
 * replication, which the ledger store does its own way, and are accepted
 * with no effect, as CreateTopics accepts them. Undefined when every change
 * holds.
 */
export function checkTopicConfigChanges(
  settings: KafkaGatewaySettings,
  changes: readonly ConfigChange[],
): ConfigRefusal | undefined {
  const named = new Set<string>();
  for (const { name, operation } of changes) {
    if (!Object.values(ConfigOperation).includes(operation as 0)) {
      return {
        errorCode: KafkaErrorCode.INVALID_REQUEST,
        errorMessage: `Unknown operation type ${operation} of ${name}`,
      };
    }
    if (named.has(name)) {
      return { errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: `Error due to duplicate config keys: ${name}` };
    }
    named.add(name);
  }
  const behaves = behaviour(settings);
  for (const { name, operation, value } of changes) {
    const type = TOPIC_CONFIGS.get(name);
    if (type === undefined) return invalid(`Unknown topic config name: ${name}`);
    if (operation === ConfigOperation.DELETE) continue;
    if (value === null) return invalid(`Null value not supported for topic configs: ${name}`);
    const listChange = operation === ConfigOperation.APPEND || operation === ConfigOperation.SUBTRACT;
    if (listChange && type !== 'list') {
      const verb = operation === ConfigOperation.APPEND ? 'append' : 'subtract';
      return invalid(`Config value ${verb} is not allowed for config key: ${name}`);
    }
    if (!wellTyped(name, type, value)) return invalid(`Invalid value ${value} for configuration ${name}`);
    const described = behaves.get(name);
    if (described === undefined) continue;
    const current = listOf(described.value);
    const result = !listChange
      ? value
      : operation === ConfigOperation.APPEND
        ? [...current, ...listOf(value).filter((item) => !current.includes(item))].join(',')
        : current.filter((item) => !listOf(value).includes(item)).join(',');
    if (!sameValue(type, result, described.value)) {
      return {
        errorCode: KafkaErrorCode.POLICY_VIOLATION,
        errorMessage: `${name} is ${described.value} on every Ledgerline topic and cannot be set to ${result}: ${described.decidedBy}`,
      };
    }
  }
  return undefined;
}
