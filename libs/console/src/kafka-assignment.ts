import { ByteReader } from '@ledgerline/kafka-protocol';

/**
 * The partitions of a member's assignment, "topic-partition", from Kafka's
 * ConsumerProtocol Assignment (version int16, then topics with their
 * partitions, then user data). An assignment of another protocol (Connect,
 * Streams' own) or one cut short gives what could be read.
 */
export function assignedPartitions(bytes: Uint8Array): string[] {
  if (bytes.length < 6) return [];
  const reader = new ByteReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const assigned: string[] = [];
  try {
    reader.int16('assignment version');
    const topics = reader.int32('assignment topics');
    for (let topic = 0; topic < topics; topic++) {
      const name = reader.string(false, false, 'assignment topic') ?? '';
      const partitions = reader.int32('assignment partitions');
      for (let partition = 0; partition < partitions; partition++) {
        assigned.push(`${name}-${reader.int32('assignment partition')}`);
      }
    }
  } catch {
    // A protocol the console does not read: the partitions read so far are all it can show.
  }
  return assigned;
}
