import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';

/** One topic of a consumer's assignment and the partitions it was given. */
export interface AssignedTopic {
  topic: string;
  partitions: number[];
}

/**
 * The topics and partitions of Kafka's ConsumerProtocol Assignment (version
 * int16, then topics with their partitions, then user data), as a group
 * leader sends it in SyncGroup. An assignment of another protocol (Connect,
 * Streams' own) or one cut short gives what could be read: the coordinator
 * passes assignments through unread, so nothing here may throw.
 */
export function decodeConsumerAssignment(bytes: Uint8Array): AssignedTopic[] {
  if (bytes.length < 6) return [];
  const reader = new ByteReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const assigned: AssignedTopic[] = [];
  try {
    reader.int16('assignment version');
    const topics = reader.int32('assignment topics');
    for (let index = 0; index < topics; index++) {
      const topic: AssignedTopic = { topic: reader.string(false, false, 'assignment topic') ?? '', partitions: [] };
      assigned.push(topic);
      const partitions = reader.int32('assignment partitions');
      for (let partition = 0; partition < partitions; partition++)
        topic.partitions.push(reader.int32('assignment partition'));
    }
  } catch {
    // Another protocol's bytes: what was read so far is all there is.
  }
  return assigned;
}

/** A ConsumerProtocol Assignment (version 1, no user data), as a group leader's client encodes it. */
export function encodeConsumerAssignment(topics: readonly AssignedTopic[]): Buffer {
  const writer = new ByteWriter().int16(1).int32(topics.length);
  for (const { topic, partitions } of topics) {
    writer.string(topic, false).int32(partitions.length);
    for (const partition of partitions) writer.int32(partition);
  }
  return writer.int32(-1).finish();
}

/**
 * The topics of Kafka's ConsumerProtocol Subscription (version int16, then
 * the topics, then user data and, from version 1, owned partitions, which are
 * not read), as a consumer sends it in JoinGroup; undefined when the bytes do
 * not hold a whole topic list (another protocol's, or cut short), since then
 * which topics the member reads cannot be told.
 */
export function decodeConsumerSubscription(bytes: Uint8Array): string[] | undefined {
  const reader = new ByteReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  try {
    reader.int16('subscription version');
    const count = reader.arrayLength(false, false, 2, 'subscription topics');
    const topics: string[] = [];
    for (let index = 0; index < count; index++) topics.push(reader.string(false, false, 'subscription topic')!);
    return topics;
  } catch {
    return undefined;
  }
}

/** A ConsumerProtocol Subscription (version 0, no user data), as a consumer encodes it. */
export function encodeConsumerSubscription(topics: readonly string[]): Buffer {
  const writer = new ByteWriter().int16(0).int32(topics.length);
  for (const topic of topics) writer.string(topic, false);
  return writer.int32(-1).finish();
}
