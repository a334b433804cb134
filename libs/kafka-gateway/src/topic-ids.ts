/** How many topic ids the gateway remembers the Kafka name of; the oldest is forgotten first. */
export const MAX_REMEMBERED_TOPIC_IDS = 100_000;

/**
 * The Kafka name each topic id was last answered with (Metadata v10+), so a
 * Fetch by id (v13+) reaches the topic a client learnt the id of, of any
 * namespace (a `tenant/namespace/topic` name too), without asking the
 * metadata service. A name found here is checked against the topic's current
 * id before it is used: a topic deleted and created again has a new one.
 */
export class TopicIdNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly capacity = MAX_REMEMBERED_TOPIC_IDS) {}

  note(topicId: Uint8Array, kafkaName: string): void {
    if (topicId.every((byte) => byte === 0)) return;
    const key = Buffer.from(topicId).toString('hex');
    this.names.delete(key);
    this.names.set(key, kafkaName);
    if (this.names.size > this.capacity) this.names.delete(this.names.keys().next().value as string);
  }

  nameOf(topicId: Uint8Array): string | undefined {
    return this.names.get(Buffer.from(topicId).toString('hex'));
  }

  get size(): number {
    return this.names.size;
  }
}
