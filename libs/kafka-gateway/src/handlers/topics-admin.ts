import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf, kafkaErrorOf } from '../kafka-errors.js';
import { partitionsOfAssignments } from '../replica-assignments.js';
import { topicAdminErrorOf } from '../topic-admin-errors.js';
import { BROKER_RESOURCE, checkTopicConfigs, describedConfigs, TOPIC_RESOURCE } from '../topic-configs.js';
import type { Session } from '../session.js';

/** Partitions one CreateTopics may ask for per topic. */
export const MAX_PARTITIONS = 10_000;

type Creatable = {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
};

type Refusal = { errorCode: number; errorMessage: string };

/**
 * The partitions a topic asks for, or why it is refused, in the order Kafka's
 * controller checks them: configs, then manual assignments (which set the
 * partition count) or num_partitions and replication_factor (-1: the default).
 * The replication factor, like an assignment's replicas, decides nothing here:
 * the ledger store replicates.
 */
function partitionsAskedFor(context: GatewayContext, topic: Creatable): number | Refusal {
  const configRefusal = checkTopicConfigs(topic.configs);
  if (configRefusal !== undefined) return configRefusal;
  const partitions =
    topic.assignments.length > 0
      ? partitionsOfAssignments(topic, new Set(context.peers.brokers().map((broker) => broker.nodeId)))
      : topic.replicationFactor !== -1 && topic.replicationFactor < 1
        ? {
            errorCode: KafkaErrorCode.INVALID_REPLICATION_FACTOR,
            errorMessage: 'Replication factor must be larger than 0, or -1 to use the default value.',
          }
        : topic.numPartitions === -1
          ? context.settings.kafkaDefaultPartitions
          : topic.numPartitions;
  if (typeof partitions !== 'number') return partitions;
  if (partitions < 1 || partitions > MAX_PARTITIONS) {
    return {
      errorCode: KafkaErrorCode.INVALID_PARTITIONS,
      errorMessage: `${partitions} partitions: give 1 to ${MAX_PARTITIONS}, or -1 for the default`,
    };
  }
  return partitions;
}

async function createOne(
  context: GatewayContext,
  topic: Creatable,
  validateOnly: boolean,
  session: Session,
): Promise<Message> {
  const result = (errorCode: number, errorMessage: string | null = null): Message => ({
    name: topic.name,
    errorCode,
    errorMessage,
  });
  try {
    const ledgerlineTopic = context.names.ledgerlineTopic(topic.name);
    if ((await context.backend.partitions(ledgerlineTopic, session.caller)) !== undefined) {
      return result(KafkaErrorCode.TOPIC_ALREADY_EXISTS, `${topic.name} exists`);
    }
    const partitions = partitionsAskedFor(context, topic);
    if (typeof partitions !== 'number') return result(partitions.errorCode, partitions.errorMessage);
    if (!validateOnly) await context.backend.createTopic(ledgerlineTopic, partitions, session.caller);
    return result(KafkaErrorCode.NONE);
  } catch (error) {
    const code = topicAdminErrorOf(error);
    return result(
      code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.INVALID_TOPIC_EXCEPTION : code,
      errorMessageOf(error),
    );
  }
}

/** How many times a request names each topic: Kafka's admin calls refuse a topic named twice. */
export function timesNamed(topics: readonly { name: string }[]): Map<string, number> {
  const named = new Map<string, number>();
  for (const topic of topics) named.set(topic.name, (named.get(topic.name) ?? 0) + 1);
  return named;
}

/**
 * CreateTopics v0-4: partitioned topics. Configs are checked as Kafka checks
 * them (topic-configs.ts) and manual assignments as Kafka's controller checks
 * them against the live gateways (replica-assignments.ts). A topic named more
 * than once in one request is not created and gets one answer, INVALID_REQUEST,
 * as Kafka's controller answers it (ControllerApis.createTopics): which of its
 * entries was meant cannot be told.
 */
export async function handleCreateTopics(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const validateOnly = request.body['validateOnly'] === true;
  const asked = request.body['topics'] as Creatable[];
  const named = timesNamed(asked);
  const unique = asked.filter((topic) => named.get(topic.name) === 1);
  const duplicates = [...named].filter(([, count]) => count > 1).map(([name]) => name);
  const topics = await Promise.all(unique.map((topic) => createOne(context, topic, validateOnly, session)));
  for (const name of duplicates) {
    topics.push({ name, errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' });
  }
  return { throttleTimeMs: 0, topics };
}

/** DeleteTopics v0-3. */
export async function handleDeleteTopics(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const responses = await Promise.all(
    (request.body['topicNames'] as string[]).map(async (name) => {
      try {
        const topic = context.names.ledgerlineTopic(name);
        await context.backend.deleteTopic(topic, session.caller);
        context.forgetTopic(topic);
        return { name, errorCode: KafkaErrorCode.NONE };
      } catch (error) {
        return { name, errorCode: kafkaErrorOf(error) };
      }
    }),
  );
  return { throttleTimeMs: 0, responses };
}

/** ConfigSource DEFAULT_CONFIG and ConfigType STRING (DescribeConfigs v1+ and v3+). */
const DEFAULT_CONFIG = 5;
const STRING_TYPE = 2;

type Resource = { resourceType: number; resourceName: string; configurationKeys: string[] | null };

async function describeOne(context: GatewayContext, resource: Resource, session: Session): Promise<Message> {
  const base = { resourceType: resource.resourceType, resourceName: resource.resourceName };
  if (resource.resourceType !== TOPIC_RESOURCE && resource.resourceType !== BROKER_RESOURCE) {
    return { ...base, errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: 'only topics and brokers', configs: [] };
  }
  if (resource.resourceType === TOPIC_RESOURCE) {
    try {
      const count = await context.partitionCount(
        context.names.ledgerlineTopic(resource.resourceName),
        session.caller,
        false,
      );
      if (count === undefined) {
        return { ...base, errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, configs: [] };
      }
    } catch (error) {
      return { ...base, errorCode: kafkaErrorOf(error), errorMessage: errorMessageOf(error), configs: [] };
    }
  }
  const wanted = resource.configurationKeys === null ? undefined : new Set(resource.configurationKeys);
  const configs = Object.entries(describedConfigs(context.settings, resource.resourceType))
    .filter(([name]) => wanted === undefined || wanted.has(name))
    .map(([name, value]) => ({
      name,
      value,
      readOnly: true,
      isDefault: true,
      configSource: DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: [],
      configType: STRING_TYPE,
      documentation: null,
    }));
  return { ...base, errorCode: KafkaErrorCode.NONE, errorMessage: null, configs };
}

/** DescribeConfigs v0-3: the settings that shape how topics behave here, read-only. */
export async function handleDescribeConfigs(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const results = await Promise.all(
    (request.body['resources'] as Resource[]).map((resource) => describeOne(context, resource, session)),
  );
  return { throttleTimeMs: 0, results };
}
