import { LedgerlineError } from '@ledgerline/errors';
import { NamespaceName, TopicName } from '@ledgerline/naming';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { PoliciesSchema, PublishReceipt } from '@ledgerline/proto';
import type { CommittedOffset, FetchResult, OffsetAt, ProducerMark, PublishEntry } from './backend-types.js';
import { AdminGroupIndexRecords, type GroupIndexRecords } from './group-index.js';
import type { Caller, OwnerRouter } from './owner-router.js';
import { KAFKA_PRODUCER_PREFIX } from './kafka-producer-names.js';
import { recordTimestamp } from './record-mapping.js';
import { topicSummary, type TopicSummary } from './topic-summary.js';

/** The cursor property holding a Kafka group's committed offset, exactly (positions only say which entry). */
export const COMMITTED_OFFSET_PROPERTY = 'kafka.committed.offset';
/** The string cursor property holding the metadata of a group's last commit (OffsetCommit's committed_metadata). */
export const COMMITTED_METADATA_PROPERTY = 'kafka.committed.metadata';
/** Beyond every offset (the largest the owners take): FindPosition answers past_end with the next offset. */
const END_OF_TOPIC = BigInt(Number.MAX_SAFE_INTEGER);
/** How long a namespace's writer namespace (PIP-63) is trusted before it is read again. */
const WRITER_NAMESPACE_TTL_MS = 5_000;
const MAX_CACHED_NAMESPACES = 10_000;

export type { CommittedOffset, FetchResult, OffsetAt, ProducerMark, PublishEntry } from './backend-types.js';

/**
 * The Ledgerline operations the Kafka APIs need, in Ledgerline's terms
 * (topic names of partitions, continuous offsets, cursors), over the public
 * gRPC services: admin and lookup on the metadata service; Topics and
 * Cursors on each topic's writer owner.
 */
export class LedgerlineBackend {
  private readonly writerNamespaces = new Map<string, { writer: string; readAtMs: number }>();
  /** Groups' indexes of committed partitions, kept by the metadata service. */
  readonly groupIndex: GroupIndexRecords;

  constructor(private readonly router: OwnerRouter) {
    this.groupIndex = new AdminGroupIndexRecords(router);
  }

  /** The topic's partition count (0: not partitioned), or undefined when it does not exist. */
  async partitions(topic: string, caller: Caller): Promise<number | undefined> {
    return (await this.topic(topic, caller))?.partitions;
  }

  /**
   * The topic's partition count and id (GetTopic, which gives a topic created
   * before ids existed its id, once), or undefined when it does not exist.
   */
  async topic(topic: string, caller: Caller): Promise<TopicSummary | undefined> {
    try {
      const answer = await this.router.admin.getTopic({ topic }, this.router.callOptions(caller));
      return topicSummary(answer.topic);
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }
  }

  /** The topic of `namespace` that has `topicId` (16 bytes), or undefined when no live topic there has it. */
  async topicById(namespace: string, topicId: Uint8Array, caller: Caller): Promise<TopicSummary | undefined> {
    try {
      const answer = await this.router.admin.getTopicById({ namespace, topicId }, this.router.callOptions(caller));
      return topicSummary(answer.topic);
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }
  }

  /**
   * Whether the namespace lets topics be created on first use: its policy
   * allowAutoTopicCreation, never on a reader namespace. A namespace that does
   * not exist allows nothing (its topics are unknown, as Kafka says).
   */
  async allowsAutoTopicCreation(namespace: string, caller: Caller): Promise<boolean> {
    try {
      const answer = await this.router.admin.getNamespace({ namespace }, this.router.callOptions(caller));
      const policies = answer.namespace?.policies;
      return policies?.allowAutoTopicCreation === true && policies.readonly !== true;
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return false;
      throw error;
    }
  }

  /**
   * Whether the namespace exists, read with the caller's rights: GetNamespace
   * needs the namespace's admin (its tenant's admin role, or a super-user),
   * the right every topic admin call needs, so a caller without it is
   * refused PERMISSION_DENIED whether or not the namespace exists.
   */
  async namespaceExists(namespace: string, caller: Caller): Promise<boolean> {
    try {
      await this.router.admin.getNamespace({ namespace }, this.router.callOptions(caller));
      return true;
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return false;
      throw error;
    }
  }

  async createTopic(topic: string, partitions: number, caller: Caller): Promise<void> {
    await this.router.admin.createTopic({ topic, partitions }, this.router.callOptions(caller));
  }

  /**
   * Grows a partitioned topic to `partitions` (the metadata service's
   * UpdatePartitionedTopic, which checks again what the caller checked, so a
   * concurrent change cannot slip between); with validateOnly nothing changes.
   */
  async growTopic(topic: string, partitions: number, validateOnly: boolean, caller: Caller): Promise<void> {
    await this.router.admin.updatePartitionedTopic(
      { topic, partitions, validateOnly },
      this.router.callOptions(caller),
    );
  }

  async deleteTopic(topic: string, caller: Caller): Promise<void> {
    await this.router.admin.deleteTopic({ topic }, this.router.callOptions(caller));
  }

  /** Every topic of a namespace, across pages. */
  async listTopics(namespace: string, caller: Caller): Promise<string[]> {
    const topics: string[] = [];
    let pageToken = '';
    do {
      const page = await this.router.admin.listTopics(
        { namespace, pageToken, pageSize: 1000 },
        this.router.callOptions(caller),
      );
      topics.push(...page.topics);
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    return topics;
  }

  /** Creates the tenant and namespace unless they exist; an existing namespace keeps its policies. */
  async ensureNamespace(
    tenant: string,
    namespace: string,
    policies: MessageInitShape<typeof PoliciesSchema>,
    caller: Caller,
  ): Promise<void> {
    for (const create of [
      () => this.router.admin.createTenant({ tenant, adminRoles: [] }, this.router.callOptions(caller)),
      () =>
        this.router.admin.createNamespace(
          { namespace: `${tenant}/${namespace}`, policies },
          this.router.callOptions(caller),
        ),
    ]) {
      try {
        await create();
      } catch (error) {
        if (!(error instanceof LedgerlineError && error.code === 'ALREADY_EXISTS')) throw error;
      }
    }
  }

  /**
   * Stores one Kafka batch as one entry; the receipt carries its first and
   * last offsets. Batches for one owner share a Publish stream and travel
   * coalesced, several entries per request, as the SDK's do.
   */
  async publish(topic: string, entry: PublishEntry, caller: Caller, onIssued?: () => void): Promise<PublishReceipt> {
    return this.router.withPublisher(
      topic,
      caller,
      (publisher) =>
        publisher.publish({
          topic,
          sequenceId: entry.sequenceId,
          producerName: entry.producerName,
          contiguousSequence: entry.contiguousSequence,
          messages: entry.messages,
          maxEventTimeMs: entry.maxTimestampMs,
        }),
      onIssued,
    );
  }

  async fetch(
    topic: string,
    request: { offset: bigint; maxEntries: number; maxBytes: number; maxWaitMs: number },
    caller: Caller,
    signal?: AbortSignal,
  ): Promise<FetchResult> {
    return this.router.withOwner(topic, caller, async (owner) => {
      const answer = await owner.topics.fetchByOffset(
        {
          topic,
          offset: request.offset,
          maxEntries: request.maxEntries,
          maxBytes: BigInt(request.maxBytes),
          maxWaitMs: BigInt(request.maxWaitMs),
        },
        this.router.callOptions(caller, signal, this.deadlineAfterWait(request.maxWaitMs)),
      );
      return { entries: answer.entries, nextOffset: answer.nextOffset };
    });
  }

  private deadlineAfterWait(waitMs: number): number {
    return this.router.timeoutMs + waitMs;
  }

  /** The first retained offset (Kafka's log start offset). */
  async earliestOffset(topic: string, caller: Caller): Promise<bigint> {
    return (await this.findPosition(topic, { offset: 0n }, caller)).offset;
  }

  /** The offset the next message will get (Kafka's log end offset and high watermark). */
  async nextOffset(topic: string, caller: Caller): Promise<bigint> {
    return (await this.findPosition(topic, { offset: END_OF_TOPIC }, caller)).offset;
  }

  /**
   * The first record whose own timestamp is at or after `timestampMs` (FindPosition by event time: Kafka's
   * CreateTime lookup) and that timestamp, as Fetch answers it; undefined when there is none.
   */
  async offsetForTime(topic: string, timestampMs: bigint, caller: Caller): Promise<OffsetAt | undefined> {
    const found = await this.findPosition(topic, { timestampMs }, caller);
    if (found.pastEnd) return undefined;
    const read = await this.fetch(topic, { offset: found.offset, maxEntries: 1, maxBytes: 0, maxWaitMs: 0 }, caller);
    const [entry] = read.entries;
    const message = entry?.messages.find((candidate) => candidate.offset === found.offset);
    return { offset: found.offset, timestampMs: message ? recordTimestamp(entry!, message) : timestampMs };
  }

  private async findPosition(
    topic: string,
    target: { offset: bigint } | { timestampMs: bigint },
    caller: Caller,
  ): Promise<{ offset: bigint; pastEnd: boolean; position: { ledgerId: bigint; entryId: bigint } | undefined }> {
    return this.router.withOwner(topic, caller, async (owner) => {
      const answer = await owner.topics.findPosition(
        {
          topic,
          target:
            'offset' in target
              ? { case: 'offset', value: target.offset }
              : { case: 'timestampMs', value: target.timestampMs },
          byEventTime: 'timestampMs' in target, // every topic here is CreateTime
        },
        this.router.callOptions(caller),
      );
      return { offset: answer.offset, pastEnd: answer.pastEnd, position: answer.position };
    });
  }

  /**
   * Deletes the messages of a partition's topic before `offset` (-1: every
   * message stored so far) on its writer owner (TopicsService.DeleteRecords,
   * the topic's tenant admin's right) and answers the low watermark.
   */
  async deleteRecords(topic: string, offset: bigint, caller: Caller): Promise<bigint> {
    return this.router.withOwner(topic, caller, async (owner) => {
      const answer = await owner.topics.deleteRecords({ topic, beforeOffset: offset }, this.router.callOptions(caller));
      return answer.lowWatermark;
    });
  }

  /**
   * The Kafka producers the writer owner of a partition's topic deduplicates
   * against (TopicsService.ListProducers, the consume right), the most recently
   * active MAX_LISTED_PRODUCERS (1,000) of them.
   */
  async producers(topic: string, caller: Caller): Promise<ProducerMark[]> {
    const answer = await this.router.withOwner(topic, caller, (owner) =>
      owner.topics.listProducers({ topic, namePrefix: KAFKA_PRODUCER_PREFIX }, this.router.callOptions(caller)),
    );
    return answer.producers;
  }

  /**
   * Where a group's cursor on `topic` lives: the topic itself, or for a topic
   * of a reader namespace (PIP-63) the writer topic it mirrors, whose writer
   * owner keeps every reader subscription's cursor. A read-only owner serves
   * the reads and no cursor calls.
   */
  private async cursorTopic(topic: string, caller: Caller): Promise<string> {
    const name = TopicName.parse(topic);
    const writer = await this.writerNamespaceOf(name.namespaceName.toString(), caller);
    return writer === ''
      ? topic
      : TopicName.inNamespace(NamespaceName.parse(writer), name.localName, name.domain).toString();
  }

  private async writerNamespaceOf(namespace: string, caller: Caller): Promise<string> {
    const cached = this.writerNamespaces.get(namespace);
    if (cached !== undefined && Date.now() - cached.readAtMs < WRITER_NAMESPACE_TTL_MS) return cached.writer;
    const answer = await this.router.admin.getNamespace({ namespace }, this.router.callOptions(caller));
    const writer = answer.namespace?.policies?.writerNamespace ?? '';
    this.writerNamespaces.delete(namespace);
    this.writerNamespaces.set(namespace, { writer, readAtMs: Date.now() });
    if (this.writerNamespaces.size > MAX_CACHED_NAMESPACES) {
      this.writerNamespaces.delete(this.writerNamespaces.keys().next().value as string);
    }
    return writer;
  }

  /** The offset a group committed on a partition's topic and its metadata; offset -1 when it has none. */
  async committedOffset(topic: string, group: string, caller: Caller): Promise<CommittedOffset> {
    topic = await this.cursorTopic(topic, caller);
    try {
      const answer = await this.router.withOwner(topic, caller, (owner) =>
        owner.cursors.getCursor({ topic, subscription: group }, this.router.callOptions(caller)),
      );
      return {
        offset: answer.cursor?.properties[COMMITTED_OFFSET_PROPERTY] ?? -1n,
        metadata: answer.cursor?.cursorProperties[COMMITTED_METADATA_PROPERTY] ?? '',
      };
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return { offset: -1n, metadata: '' };
      throw error;
    }
  }

  /**
   * Deletes a group's commit on a partition's topic: the subscription named
   * by the group, when it holds a Kafka commit (the committed-offset
   * property), is unsubscribed through TopicsService, so the caller needs the
   * consume right on the topic's namespace, as for its commits' moves. A
   * subscription the group never committed (an SDK consumer's of the same
   * name) is left alone. True when a commit was deleted, false when there was
   * none; FAILED_PRECONDITION / SUBSCRIPTION_BUSY while consumers are
   * connected to the subscription.
   */
  async deleteCommit(topic: string, group: string, caller: Caller): Promise<boolean> {
    topic = await this.cursorTopic(topic, caller);
    return this.router.withOwner(topic, caller, async (owner) => {
      const options = this.router.callOptions(caller);
      try {
        const found = await owner.cursors.getCursor({ topic, subscription: group }, options);
        if (found.cursor?.properties[COMMITTED_OFFSET_PROPERTY] === undefined) return false;
        await owner.topics.unsubscribe({ topic, subscription: group }, options);
        return true;
      } catch (error) {
        // No subscription (or it went meanwhile): nothing was committed there.
        if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return false;
        throw error;
      }
    });
  }

  /**
   * Commits a group's offset on a partition's topic: the subscription named
   * by the group moves so that `offset` is the next message it reads (its
   * backlog is the group's lag), and the exact offset and the commit's
   * metadata are kept as cursor properties, set by the same update as the
   * move.
   */
  async commitOffset(topic: string, group: string, commit: CommittedOffset, caller: Caller): Promise<void> {
    topic = await this.cursorTopic(topic, caller);
    const offset = commit.offset;
    await this.router.withOwner(topic, caller, async (owner) => {
      const options = this.router.callOptions(caller);
      // One call: a consumer that commits after every batch (kafkajs's default) waits for this answer before it
      // fetches again. The owner creates the cursor on the group's first commit there, moves it to the entry
      // holding `offset` and stores the exact offset and metadata in the same write; commits of one partition
      // are ordered here (handlers/offsets.ts), so the last one wins whatever the cursor's reset epoch.
      await owner.cursors.updateCursor(
        {
          topic,
          subscription: group,
          create: true,
          update: { case: 'reset', value: { offset, anyEpoch: true } },
          properties: { [COMMITTED_OFFSET_PROPERTY]: offset },
          cursorProperties: { [COMMITTED_METADATA_PROPERTY]: commit.metadata },
          withoutRanges: true,
        },
        options,
      );
    });
  }
}
