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
const METADATA = 3;
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

/** Opens a connection to one gateway, signed in with the caller's token when there is one. */
async function connectTo(context: ConsoleContext, caller: Caller, address: string): Promise<KafkaConnection> {
  const connection = await KafkaConnection.open(address, context.callDeadlineMs);
  try {
    if (caller.token !== undefined) await connection.signIn(caller.token);
    return connection;
  } catch (error) {
    connection.close();
    throw error;
  }
}

/** Every gateway of the cluster as Metadata lists them ("host:port"), the one asked included. */
async function gatewayAddresses(connection: KafkaConnection, asked: string): Promise<string[]> {
  const answer = await connection.request(METADATA, 1, { topics: [] });
  const brokers = list(answer, 'brokers').map((broker) => `${String(broker['host'])}:${String(broker['port'])}`);
  return brokers.length === 0 ? [asked] : [...new Set(brokers)];
}

/** The groups one gateway coordinates (ListGroups answers those), described with their lag, through it. */
async function groupsAt(connection: KafkaConnection, wanted: (groupId: string) => boolean): Promise<KafkaGroup[]> {
  const listed = await connection.request(LIST_GROUPS, 2, {});
  if (listed['errorCode'] !== KafkaErrorCode.NONE) throw kafkaFailure('ListGroups', listed['errorCode']);
  const ids = list(listed, 'groups')
    .map((group) => group['groupId'] as string)
    .filter(wanted)
    .sort()
    .slice(0, MAX_KAFKA_GROUPS);
  if (ids.length === 0) return [];
  const described = await connection.request(DESCRIBE_GROUPS, 4, { groups: ids });
  const groups: KafkaGroup[] = [];
  for (const group of list(described, 'groups')) groups.push(await describeGroup(connection, group));
  return groups;
}

/**
 * The Kafka page: the cluster's consumer groups (at most MAX_KAFKA_GROUPS),
 * each with its members, their assignments, and per partition the committed
 * offset, the log end and the lag, asked as a Kafka admin client asks: every
 * gateway Metadata lists for the groups it coordinates, and each group's
 * coordinator for its members and offsets, with the caller's token as the
 * SASL password. A gateway that cannot be reached is a page saying so.
 */
export async function listKafkaGroups(
  context: ConsoleContext,
  caller: Caller,
  request: ListKafkaGroupsRequest,
): Promise<MessageInitShape<typeof ListKafkaGroupsResponseSchema>> {
  const address = context.backends.kafkaAddress;
  if (address === undefined) return { reachable: false, errorReason: ConsoleReason.CONSOLE_SERVICE_NOT_CONFIGURED };
  const wanted = (groupId: string) => request.group === '' || groupId === request.group;
  let bootstrap: KafkaConnection;
  try {
    bootstrap = await connectTo(context, caller, address);
  } catch (thrown) {
    return { reachable: false, errorReason: LedgerlineError.from(thrown).reason };
  }
  try {
    const groups: KafkaGroup[] = [];
    for (const gateway of await gatewayAddresses(bootstrap, address)) {
      if (gateway === address) {
        groups.push(...(await groupsAt(bootstrap, wanted)));
        continue;
      }
      const connection = await connectTo(context, caller, gateway);
      try {
        groups.push(...(await groupsAt(connection, wanted)));
      } finally {
        connection.close();
      }
    }
    // One gateway listed under two names, or a group whose coordinator moved between two asks: listed once.
    const unique = [...new Map(groups.map((group) => [group.groupId!, group])).values()];
    unique.sort((a, b) => (a.groupId! < b.groupId! ? -1 : a.groupId! > b.groupId! ? 1 : 0));
    return { reachable: true, groups: unique.slice(0, MAX_KAFKA_GROUPS) };
  } finally {
    bootstrap.close();
  }
}
