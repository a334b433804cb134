import { LedgerlineError } from '@ledgerline/errors';
import { LookupService, TopicsService, type PublishReceipt } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { OwnerReason } from '@ledgerline/ownership';

/** A reason only this test producer raises: the owner ended the stream before answering every message. */
const RoutingReason = { STREAM_ENDED: 'STREAM_ENDED' } as const;

/** Retries per message before a test gives up; each waits a little longer. */
const MAX_ATTEMPTS = 200;

/**
 * What a client SDK does, reduced to what the tests need: look the topic up,
 * publish over a Publish stream with pipelining, follow NOT_OWNER to the named
 * owner, and after a failure look up again and re-send every message not yet
 * acknowledged, with the same sequence ids (deduplication drops those that
 * had landed).
 */
export class RoutingProducer {
  readonly receipts = new Map<bigint, PublishReceipt>();
  /** Failures the producer saw, by reason (each was retried). */
  readonly retriedReasons: string[] = [];
  readonly lastErrors: string[] = [];
  private readonly lookup: Client<typeof LookupService>;
  private readonly clients = new Map<string, Client<typeof TopicsService>>();

  constructor(
    metadataAddress: string,
    private readonly topic: string,
    private readonly producerName: string,
  ) {
    this.lookup = createClient(LookupService, metadataAddress);
  }

  private client(address: string): Client<typeof TopicsService> {
    let client = this.clients.get(address);
    if (client === undefined) {
      client = createClient(TopicsService, address);
      this.clients.set(address, client);
    }
    return client;
  }

  private async owner(): Promise<string> {
    const answer = await this.lookup.lookupTopic({ topic: this.topic }, { deadlineMs: 5_000 });
    return answer.advertisedAddress;
  }

  /**
   * Publishes sequence ids first..last (payload = the id as text), `window` in
   * flight at once; `onReceipt` runs after every receipt. Resolves when every
   * id has a receipt.
   */
  async publishRange(first: bigint, last: bigint, window: number, onReceipt?: (count: number) => void): Promise<void> {
    let next = first;
    let address: string | undefined;
    for (let attempt = 0; next <= last; attempt++) {
      if (attempt > MAX_ATTEMPTS) {
        const recent = this.lastErrors.slice(-3).join(' | ');
        throw new Error(`gave up after ${MAX_ATTEMPTS} attempts at sequence id ${next}; last failures: ${recent}`);
      }
      try {
        address ??= await this.owner();
        await this.stream(address, next, last, window, onReceipt);
        next = last + 1n;
      } catch (thrown) {
        const error = LedgerlineError.from(thrown);
        this.retriedReasons.push(error.reason);
        this.lastErrors.push(`${error.reason}: ${error.message}`.slice(0, 300));
        address = error.reason === OwnerReason.NOT_OWNER ? error.details['owner_address'] || undefined : undefined;
        while (next <= last && this.receipts.has(next)) next++;
        await new Promise((done) => setTimeout(done, Math.min(50 * (attempt + 1), 500)));
      }
    }
  }

  /** One stream from `from` on, until every id up to `last` has its receipt or the stream fails. */
  private async stream(
    address: string,
    from: bigint,
    last: bigint,
    window: number,
    onReceipt?: (count: number) => void,
  ): Promise<void> {
    let answered = from;
    let credit: (() => void) | undefined;
    const topic = this.topic;
    const producerName = this.producerName;
    const encoder = new TextEncoder();
    let sent = from;
    const ended = { done: false };
    async function* requests() {
      for (; sent <= last && !ended.done; sent++) {
        while (sent - answered >= BigInt(window) && !ended.done) await new Promise<void>((r) => (credit = r));
        if (ended.done) return;
        yield { message: { topic, producerName, sequenceId: sent, payload: encoder.encode(String(sent)) } };
      }
    }
    try {
      for await (const response of this.client(address).publish(requests())) {
        if (response.result.case === 'failure') {
          const failure = response.result.value;
          throw new LedgerlineError('UNAVAILABLE', failure.reason, failure.message, { details: failure.details });
        }
        const receipt = response.result.value!;
        this.receipts.set(receipt.sequenceId, receipt);
        answered = receipt.sequenceId + 1n;
        credit?.();
        onReceipt?.(this.receipts.size);
      }
    } finally {
      ended.done = true;
      credit?.();
    }
    if (answered <= last)
      throw new LedgerlineError('UNAVAILABLE', RoutingReason.STREAM_ENDED, 'the stream ended early');
  }

  close(): void {
    closeClient(this.lookup);
    for (const client of this.clients.values()) closeClient(client);
  }
}
