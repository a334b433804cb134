import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import { memberOf } from './groups.js';

type CommitPartition = { partitionIndex: number; committedOffset: bigint; committedMetadata: string | null };
type CommitTopic = { name: string; partitions: CommitPartition[] };

/**
 * OffsetCommit v0-7: a group's committed offset on a partition is the
 * position of the subscription named by the group on the partition's topic,
 * so the group's lag is that subscription's backlog and survives restarts.
 * The commit's metadata string is kept beside it (null as '', as Kafka
 * keeps it); one longer than kafkaOffsetMetadataMaxLength is refused with
 * OFFSET_METADATA_TOO_LARGE and that partition's commit is not stored.
 */
export async function handleOffsetCommit(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const groupId = request.body['groupId'] as string;
  const allowed =
    groupId === ''
      ? KafkaErrorCode.INVALID_GROUP_ID
      : !context.coordinates(groupId)
        ? KafkaErrorCode.NOT_COORDINATOR
        : context.groups.canCommit(groupId, request.body['generationId'] as number, memberOf(request.body));
  // Every partition takes its place in the commit order now, synchronously, so commits keep their arrival order.
  const topics = await Promise.all(
    (request.body['topics'] as CommitTopic[]).map(async (topic) => ({
      name: topic.name,
      partitions: await Promise.all(
        topic.partitions.map(async (partition) => ({
          partitionIndex: partition.partitionIndex,
          errorCode:
            allowed === KafkaErrorCode.NONE
              ? await commitPartition(context, groupId, topic.name, partition, session)
              : allowed,
        })),
      ),
    })),
  );
  return { throttleTimeMs: 0, topics };
}

/**
 * Commits one partition after every earlier commit of the same group and
 * partition that reached this gateway (the group's coordinator, so the only
 * gateway committing for it). Each commit moves the group's cursor by a
 * reset checked against the epoch the one before it left: two commits in
 * flight together would otherwise race, and the loser be refused. In order,
 * both are stored and the last one wins, as in Kafka's log of commits.
 */
async function commitPartition(
  context: GatewayContext,
  groupId: string,
  kafkaTopic: string,
  partition: CommitPartition,
  session: Session,
): Promise<number> {
  const metadata = partition.committedMetadata ?? '';
  if (metadata.length > context.settings.kafkaOffsetMetadataMaxLength) return KafkaErrorCode.OFFSET_METADATA_TOO_LARGE;
  let key: string;
  try {
    key = commitKey(context, groupId, kafkaTopic, partition.partitionIndex);
  } catch (error) {
    return kafkaErrorOf(error);
  }
  const turn = context.commitOrder.take(key);
  try {
    await turn.turn;
    const ledgerlineTopic = await context.resolvePartition(kafkaTopic, partition.partitionIndex, session.caller);
    // Indexed first, in the commit's turn: every stored commit is indexed (an entry without a commit is harmless).
    await context.groupIndex.indexed(ledgerlineTopic, groupId, session.caller);
    await context.backend.commitOffset(
      ledgerlineTopic,
      groupId,
      { offset: partition.committedOffset, metadata },
      session.caller,
    );
    return KafkaErrorCode.NONE;
  } catch (error) {
    return kafkaErrorOf(error);
  } finally {
    turn.issued();
  }
}

/** One group's commits on one partition, whichever name of its topic (`orders`, `public/default/orders`) they use. */
export function commitKey(context: GatewayContext, groupId: string, kafkaTopic: string, partition: number): string {
  return topicCommitKey(groupId, context.names.ledgerlineTopic(kafkaTopic), partition);
}

/** commitKey of Kafka partition `partition` of a Ledgerline topic (the topic, not its `-partition-i`). */
export function topicCommitKey(groupId: string, ledgerlineTopic: string, partition: number): string {
  return `${groupId}\u0000${ledgerlineTopic}\u0000${partition}`;
}
