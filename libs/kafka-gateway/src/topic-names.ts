import { LedgerlineError } from '@ledgerline/errors';
import { GatewayReason } from './reasons.js';

/** Kafka's legal topic names: up to 249 of [a-zA-Z0-9._-]. */
const KAFKA_TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
/** tenant/namespace/topic, optionally with persistent://: a topic of any namespace named from Kafka. */
const QUALIFIED_NAME = /^(?:persistent:\/\/)?([^/\s]+)\/([^/\s]+)\/([^/\s]+)$/;
const PARTITION_SUFFIX = /-partition-(\d+)$/;
/** The `tenant/namespace` of a `persistent://tenant/namespace/topic` name. */
const TOPIC_NAMESPACE = /^persistent:\/\/([^/]+\/[^/]+)\/[^/]+$/;

export interface NamespaceName {
  readonly tenant: string;
  readonly namespace: string;
}

/**
 * Kafka topic `orders` is `persistent://<tenant>/<namespace>/orders` of the
 * configured namespace; a Kafka name `tenant/namespace/topic` (or the full
 * `persistent://` form) reaches any namespace, as KoP allows. Kafka partition
 * i of a partitioned topic is its `-partition-i` topic; a non-partitioned
 * topic is Kafka partition 0.
 */
export class TopicNames {
  constructor(private readonly home: NamespaceName) {}

  get namespace(): string {
    return `${this.home.tenant}/${this.home.namespace}`;
  }

  /** The Ledgerline topic of a Kafka topic name; INVALID_ARGUMENT for a name neither form allows. */
  ledgerlineTopic(kafkaTopic: string): string {
    const qualified = QUALIFIED_NAME.exec(kafkaTopic);
    if (qualified !== null) return `persistent://${qualified[1]}/${qualified[2]}/${qualified[3]}`;
    if (!KAFKA_TOPIC_NAME.test(kafkaTopic) || kafkaTopic === '.' || kafkaTopic === '..') {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        GatewayReason.INVALID_KAFKA_TOPIC,
        `"${kafkaTopic}" is not a Kafka topic name`,
      );
    }
    if (PARTITION_SUFFIX.test(kafkaTopic)) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        GatewayReason.INVALID_KAFKA_TOPIC,
        `"${kafkaTopic}" names a partition: Kafka clients name the topic and a partition index`,
      );
    }
    return `persistent://${this.namespace}/${kafkaTopic}`;
  }

  /** The `tenant/namespace` of a Ledgerline topic name ledgerlineTopic made. */
  namespaceOf(ledgerlineTopic: string): string {
    const match = TOPIC_NAMESPACE.exec(ledgerlineTopic);
    if (match === null) throw new Error(`${ledgerlineTopic} is not a topic name ledgerlineTopic makes`);
    return match[1]!;
  }

  /** The Ledgerline topic serving one Kafka partition (`partitions` 0 means not partitioned). */
  partitionTopic(ledgerlineTopic: string, partitions: number, partition: number): string {
    return partitions === 0 ? ledgerlineTopic : `${ledgerlineTopic}-partition-${partition}`;
  }

  /**
   * The Kafka name of a topic of the home namespace as the admin API lists
   * it (a partitioned topic is listed by its partitions: each names its topic).
   */
  kafkaTopicOf(ledgerlineTopic: string): string | undefined {
    const prefix = `persistent://${this.namespace}/`;
    if (!ledgerlineTopic.startsWith(prefix)) return undefined;
    return ledgerlineTopic.slice(prefix.length).replace(PARTITION_SUFFIX, '');
  }
}

/** Partitions Kafka sees for a topic with this many Ledgerline partitions (0: not partitioned). */
export function kafkaPartitionCount(partitions: number): number {
  return partitions === 0 ? 1 : partitions;
}
