import { KafkaErrorCode } from '@ledgerline/kafka-protocol';

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
