/** A topic as Kafka's Metadata needs it: its name, partition count (0: not partitioned) and id (16 bytes). */
export interface TopicSummary {
  name: string;
  partitions: number;
  topicId: Buffer;
}

/** Kafka's "no id": what a topic answered without one (a metadata service older than topic ids) carries. */
export const NO_TOPIC_ID = Buffer.alloc(16);

/** A metadata service's TopicInfo as the gateway keeps it (the id copied: the answer's bytes are not ours). */
export function topicSummary(
  info: { name: string; partitions: number; topicId: Uint8Array } | undefined,
): TopicSummary {
  return {
    name: info?.name ?? '',
    partitions: info?.partitions ?? 0,
    topicId: info?.topicId.length === 16 ? Buffer.from(info.topicId) : NO_TOPIC_ID,
  };
}
