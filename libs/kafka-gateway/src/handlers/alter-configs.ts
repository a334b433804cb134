import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf, kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import {
  BROKER_RESOURCE,
  checkTopicConfigChanges,
  ConfigOperation,
  TOPIC_RESOURCE,
  type ConfigChange,
} from '../topic-configs.js';

type Resource = { resourceType: number; resourceName: string; changes: ConfigChange[] };
type Outcome = { errorCode: number; errorMessage: string | null };

const NONE: Outcome = { errorCode: KafkaErrorCode.NONE, errorMessage: null };

/**
 * A topic's changes: the caller must be the namespace's admin (the right
 * every topic admin call needs; TOPIC_AUTHORIZATION_FAILED otherwise, before
 * anything is said of the topic), the topic must exist, and the changes hold
 * as checkTopicConfigChanges says. Nothing is stored: a change that holds
 * is one the topic already agrees with, or one with no effect here.
 */
async function alterTopic(context: GatewayContext, resource: Resource, session: Session): Promise<Outcome> {
  let topic: string;
  try {
    topic = context.names.ledgerlineTopic(resource.resourceName);
  } catch (error) {
    return { errorCode: KafkaErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: errorMessageOf(error) };
  }
  try {
    const exists =
      (await context.backend.namespaceExists(context.names.namespaceOf(topic), session.caller)) &&
      (await context.partitionCount(topic, session.caller, false)) !== undefined;
    if (!exists) {
      return {
        errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: `${resource.resourceName} does not exist`,
      };
    }
  } catch (error) {
    return { errorCode: kafkaErrorOf(error), errorMessage: errorMessageOf(error) };
  }
  return checkTopicConfigChanges(context.settings, resource.changes) ?? NONE;
}

/**
 * A broker's changes. The broker configs DescribeConfigs answers are the
 * gateway's settings, read at start: none can change while it runs, as a
 * Kafka broker's static configs cannot, and Kafka's answer to setting one is
 * INVALID_REQUEST. Deleting a config (back to its default) changes nothing
 * and is answered NONE. The resource names this gateway (its broker id) or
 * the cluster's default (empty), as a Kafka broker requires.
 */
function alterBroker(context: GatewayContext, resource: Resource): Outcome {
  const nodeId = String(context.broker().nodeId);
  if (resource.resourceName !== '' && resource.resourceName !== nodeId) {
    return {
      errorCode: KafkaErrorCode.INVALID_REQUEST,
      errorMessage: `Unexpected broker id, expected ${nodeId} or empty string, but received ${resource.resourceName}`,
    };
  }
  const set = resource.changes.filter((change) => change.operation !== ConfigOperation.DELETE);
  if (set.length === 0) return NONE;
  return {
    errorCode: KafkaErrorCode.INVALID_REQUEST,
    errorMessage: `Cannot update these configs dynamically: ${set.map((change) => change.name).join(', ')} (the Kafka gateway's settings, read at start)`,
  };
}

async function alterOne(context: GatewayContext, resource: Resource, session: Session): Promise<Message> {
  const base = { resourceType: resource.resourceType, resourceName: resource.resourceName };
  const outcome =
    resource.resourceType === TOPIC_RESOURCE
      ? await alterTopic(context, resource, session)
      : resource.resourceType === BROKER_RESOURCE
        ? alterBroker(context, resource)
        : { errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: 'only topics and brokers have configs here' };
  return { ...base, ...outcome };
}

/**
 * AlterConfigs v0-2: replaces a resource's configs. Checked as a Kafka broker
 * checks them (topic-configs.ts), but nothing is ever stored: no Kafka topic
 * config has a per-topic policy here, and the broker configs are the
 * gateway's settings. A topic may be "altered" only to how it behaves
 * already (what DescribeConfigs answers) or in configs with no effect here;
 * any other value is POLICY_VIOLATION. validate_only answers the same and
 * changes nothing, as every request does.
 */
export async function handleAlterConfigs(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const resources = request.body['resources'] as {
    resourceType: number;
    resourceName: string;
    configs: { name: string; value: string | null }[];
  }[];
  const responses = await Promise.all(
    resources.map((resource) =>
      alterOne(
        context,
        {
          resourceType: resource.resourceType,
          resourceName: resource.resourceName,
          changes: resource.configs.map((config) => ({ ...config, operation: ConfigOperation.SET })),
        },
        session,
      ),
    ),
  );
  return { throttleTimeMs: 0, responses };
}

/**
 * IncrementalAlterConfigs v0-1: SET, DELETE, APPEND and SUBTRACT of single
 * configs, checked and answered as AlterConfigs is (handleAlterConfigs):
 * DELETE always holds (every config here is at its default), APPEND and
 * SUBTRACT only of list configs, and the resulting value must be the one the
 * topic has for a config DescribeConfigs answers.
 */
export async function handleIncrementalAlterConfigs(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const resources = request.body['resources'] as {
    resourceType: number;
    resourceName: string;
    configs: { name: string; configOperation: number; value: string | null }[];
  }[];
  const responses = await Promise.all(
    resources.map((resource) =>
      alterOne(
        context,
        {
          resourceType: resource.resourceType,
          resourceName: resource.resourceName,
          changes: resource.configs.map((config) => ({
            name: config.name,
            operation: config.configOperation,
            value: config.value,
          })),
        },
        session,
      ),
    ),
  );
  return { throttleTimeMs: 0, responses };
}
