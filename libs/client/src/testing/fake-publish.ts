import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError, type CodeName } from '@ledgerline/errors';
import type { PublishMessage, PublishResponseSchema } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { abortable, canonicalTopic, FakeClusterReason, type OpenStream, type OwnerHost } from './fake-rpc.js';
import type { FakeTopic } from './fake-topic.js';

type PublishResponseInit = MessageInitShape<typeof PublishResponseSchema>;

/**
 * The Publish side of the fake owners: entries stored in the shared topics,
 * with refusals and lost receipts staged on demand.
 */
export class FakePublishService {
  /** Every entry the owners received. */
  readonly published: PublishMessage[] = [];
  /** How many entries each Publish request the owners read carried, in order. */
  readonly entriesPerRequest: number[] = [];
  private readonly lostReceipts = new Map<string, number>();
  private readonly refusals = new Map<string, { code: CodeName; reason: string }[]>();
  private readonly refusedSequenceIds = new Map<string, { code: CodeName; reason: string }>();

  constructor(
    private readonly host: OwnerHost,
    /** Entries read per request and announced; 0 plays an owner that predates coalescing. */
    private readonly maxMessagesPerRequest: number,
  ) {}

  loseReceipts(topic: string, count: number): void {
    this.lostReceipts.set(canonicalTopic(topic), count);
  }

  refuseNext(topic: string, code: CodeName, reason: string): void {
    const name = canonicalTopic(topic);
    this.refusals.set(name, [...(this.refusals.get(name) ?? []), { code, reason }]);
  }

  refuseSequenceId(topic: string, sequenceId: bigint, code: CodeName, reason: string): void {
    this.refusedSequenceIds.set(`${canonicalTopic(topic)}\n${sequenceId}`, { code, reason });
  }

  publishOne(owner: number, stream: OpenStream, message: PublishMessage): PublishResponseInit {
    const name = canonicalTopic(message.topic);
    stream.topic = name;
    this.published.push(message);
    let topic: FakeTopic;
    try {
      topic = this.host.owned(owner, name);
    } catch (error) {
      const refusal = LedgerlineError.from(error);
      return {
        result: {
          case: 'failure',
          value: {
            sequenceId: message.sequenceId,
            code: refusal.grpcCode,
            reason: refusal.reason,
            message: refusal.message,
            details: refusal.details,
          },
        },
      };
    }
    const bySequenceId = `${name}\n${message.sequenceId}`;
    const refusal = this.refusedSequenceIds.get(bySequenceId) ?? this.refusals.get(name)?.shift();
    this.refusedSequenceIds.delete(bySequenceId);
    if (refusal !== undefined) {
      const code = new LedgerlineError(refusal.code, refusal.reason, '').grpcCode;
      return {
        result: {
          case: 'failure',
          value: {
            sequenceId: message.sequenceId,
            code,
            reason: refusal.reason,
            message: `refused: ${refusal.reason}`,
          },
        },
      };
    }
    const { entry, duplicate } = topic.append(message);
    const lost = this.lostReceipts.get(name) ?? 0;
    if (lost > 0 && !duplicate) {
      this.lostReceipts.set(name, lost - 1);
      throw new LedgerlineError(
        'UNAVAILABLE',
        FakeClusterReason.CONNECTION_LOST,
        'the connection dropped before the receipt',
      );
    }
    return {
      result: {
        case: 'receipt',
        value: {
          sequenceId: message.sequenceId,
          duplicate,
          ...(entry === undefined
            ? {}
            : {
                position: { ledgerId: entry.ledgerId, entryId: entry.entryId },
                firstOffset: entry.firstOffset,
                lastOffset: entry.lastOffset,
                publishTimeMs: entry.timestampMs,
              }),
        },
      },
    };
  }

  async *publish(
    owner: number,
    requests: AsyncIterable<{ message?: PublishMessage; more: PublishMessage[] }>,
    context: CallContext,
  ) {
    const stream = this.host.openStream(owner, context);
    const iterator = requests[Symbol.asyncIterator]();
    const limit = this.maxMessagesPerRequest;
    try {
      for (;;) {
        const next = await abortable(iterator.next(), stream.abort.signal);
        if (next.done === true) return;
        const request = next.value;
        const entries = limit === 0 ? [request.message!] : [request.message!, ...request.more];
        if (entries.length > Math.max(limit, 1)) throw new Error(`a request carried ${entries.length} entries`);
        this.entriesPerRequest.push(entries.length);
        const answers = entries.map((message) => this.publishOne(owner, stream, message));
        yield {
          ...answers[0]!,
          more: answers.slice(1).map((answer) => ({ result: answer.result })),
          maxMessagesPerRequest: limit,
        } as PublishResponseInit;
      }
    } finally {
      this.host.closeStream(stream);
    }
  }
}
