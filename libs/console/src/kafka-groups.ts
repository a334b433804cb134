import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode, decodeConsumerAssignment, type Message } from '@ledgerline/kafka-protocol';
import type {
  KafkaGroupSchema,
  KafkaPartitionLagSchema,
  ListKafkaGroupsRequest,
  ListKafkaGroupsResponseSchema,
} from '@ledgerline/proto';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import { KafkaConnection } from './kafka-connection.js';
import { MAX_KAFKA_GROUPS } from './limits.js';

type KafkaGroup = MessageInitShape<typeof KafkaGroupSchema>;
type PartitionLag = MessageInitShape<typeof KafkaPartitionLagSchema>;

const LIST_OFFSETS = 2;
const OFFSET_FETCH = 9;
const DESCRIBE_GROUPS = 15;
const LIST_GROUPS = 16;
/** ListOffsets' timestamp for "the log end offset". */
const LATEST = -1n;

const list = (message: Message, key: string) => (message[key] as Message[] | null | undefined) ?? [];

function kafkaFailure(what: string, errorCode: unknown): LedgerlineError {
  const code = errorCode === KafkaErrorCode.GROUP_AUTHORIZATION_FAILED ? 'PERMISSION_DENIED' : 'FAILED_PRECONDITION';
  return new LedgerlineError(
    code,
    ConsoleReason.CONSOLE_KAFKA_ERROR,
    `${what} failed with Kafka error ${String(errorCode)}`,
  );
}

async function committedOffsets(connection: KafkaConnection, groupId: string): Promise<PartitionLag[]> {
  // OffsetFetch v2+ with no topics answers every partition the group committed (the gateway: of the partitions
  // its members are assigned).
  const answer = await connection.request(OFFSET_FETCH, 3, { groupId, topics: null });
  if (answer['errorCode'] !== KafkaErrorCode.NONE) throw kafkaFailure(`OffsetFetch of ${groupId}`, answer['errorCode']);
  return list(answer, 'topics').flatMap((topic) =>
    list(topic, 'partitions').map((partition) => ({
      topic: topic['name'] as string,
      partition: partition['partitionIndex'] as number,
      committedOffset: partition['committedOffset'] as bigint,
    })),
  );
}

/** The log end offsets of the partitions named, by "topic-partition". */
async function endOffsets(
  connection: KafkaConnection,
  partitions: readonly PartitionLag[],
): Promise<Map<string, bigint>> {
  const byTopic = new Map<string, number[]>();
  for (const lag of partitions) byTopic.set(lag.topic!, [...(byTopic.get(lag.topic!) ?? []), lag.partition!]);
  if (byTopic.size === 0) return new Map();
  const answer = await connection.request(LIST_OFFSETS, 1, {
    replicaId: -1,
    topics: [...byTopic].map(([name, indexes]) => ({
      name,
      partitions: indexes.map((partitionIndex) => ({ partitionIndex, timestamp: LATEST })),
    })),
  });
  const ends = new Map<string, bigint>();
  for (const topic of list(answer, 'topics')) {
    for (const partition of list(topic, 'partitions')) {
      if (partition['errorCode'] === KafkaErrorCode.NONE) {
        ends.set(`${String(topic['name'])}-${String(partition['partitionIndex'])}`, partition['offset'] as bigint);
      }
    }
  }
  return ends;
}

async function describeGroup(connection: KafkaConnection, described: Message): Promise<KafkaGroup> {
  const groupId = described['groupId'] as string;
  const committed = await committedOffsets(connection, groupId);
  const ends = await endOffsets(connection, committed);
  const partitions = committed.map((lag) => {
    const end = ends.get(`${lag.topic}-${lag.partition}`) ?? -1n;
    const behind = end >= 0n && (lag.committedOffset as bigint) >= 0n ? end - (lag.committedOffset as bigint) : 0n;
    return { ...lag, logEndOffset: end, lag: behind > 0n ? behind : 0n };
  });
  return {
    groupId,
    state: described['groupState'] as string,
    protocolType: described['protocolType'] as string,
    protocol: described['protocolData'] as string,
    members: list(described, 'members').map((member) => ({
      memberId: member['memberId'] as string,
      clientId: member['clientId'] as string,
      clientHost: member['clientHost'] as string,
      assignments: decodeConsumerAssignment(member['memberAssignment'] as Uint8Array).flatMap(({ topic, partitions }) =>
        partitions.map((partition) => `${topic}-${partition}`),
      ),
    })),
    partitions,
    totalLag: partitions.reduce((sum, lag) => sum + (lag.lag as bigint), 0n),
  };
}

/**
 * The Kafka page: the gateway's consumer groups (at most MAX_KAFKA_GROUPS),
 * each with its members, their assignments, and per partition the committed
 * offset, the log end and the lag, asked as a Kafka admin client asks, with
 * the caller's token as the SASL password. A gateway that cannot be reached
 * is a page saying so.
 */
export async function listKafkaGroups(
  context: ConsoleContext,
  caller: Caller,
  request: ListKafkaGroupsRequest,
): Promise<MessageInitShape<typeof ListKafkaGroupsResponseSchema>> {
  const address = context.backends.kafkaAddress;
  if (address === undefined) return { reachable: false, errorReason: ConsoleReason.CONSOLE_SERVICE_NOT_CONFIGURED };
  let connection: KafkaConnection;
  try {
    connection = await KafkaConnection.open(address, context.callDeadlineMs);
  } catch (thrown) {
    return { reachable: false, errorReason: LedgerlineError.from(thrown).reason };
  }
  try {
    if (caller.token !== undefined) await connection.signIn(caller.token);
    const listed = await connection.request(LIST_GROUPS, 2, {});
    if (listed['errorCode'] !== KafkaErrorCode.NONE) throw kafkaFailure('ListGroups', listed['errorCode']);
    const ids = list(listed, 'groups')
      .map((group) => group['groupId'] as string)
      .filter((id) => request.group === '' || id === request.group)
      .sort()
      .slice(0, MAX_KAFKA_GROUPS);
    if (ids.length === 0) return { reachable: true, groups: [] };
    const described = await connection.request(DESCRIBE_GROUPS, 4, { groups: ids });
    const groups: KafkaGroup[] = [];
    for (const group of list(described, 'groups')) groups.push(await describeGroup(connection, group));
    return { reachable: true, groups };
  } finally {
    connection.close();
  }
}
