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
