import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import type { PublishMessage } from '@ledgerline/proto';
import { sequenceGap } from './errors.js';

/** Producers fenced per stream, at most; past it the oldest fence is dropped (a stream carries few producers). */
const MAX_FENCED_PRODUCERS = 10_000;

function fenceKey(message: PublishMessage): string {
  return `${message.topic}\n${message.producerName}`;
}

/** A failure the producer answers by sending the entry again, in order, rather than giving it up. */
function resentAfter(thrown: unknown): boolean {
  const error = LedgerlineError.from(thrown);
  return error.retryable || error.reason === OwnerReason.NOT_OWNER || error.reason === OwnerReason.TOPIC_UNLOADED;
}

/**
 * The order of one publish stream's producers after a refusal: per topic and
 * producer, the lowest sequence id this stream refused with a failure the
 * producer answers by sending it again (the topic could not be loaded, it
 * moved, the store was away, an append failed). A later id of that producer on
 * this stream is refused (SEQUENCE_GAP) until that one comes again, or it
 * would be stored ahead of it and its resend taken for a duplicate of
 * something never stored. Every refusal of an entry is recorded here, where
 * it happens (the stream, before the topic; the topic, at admission or when
 * the append failed), and the topic asks here, once, when it admits the
 * entry: the one place the stream's order is kept after a refusal. A new
 * stream starts afresh (the producer resends what it still holds; what it gave
 * up on it no longer sends), as Pulsar's producers reconnect and resend in order.
 */
export class ProducerFence {
  private readonly refusedFrom = new Map<string, bigint>();

  /** True when some producer is fenced (almost never): only then is each entry asked about. */
  get active(): boolean {
    return this.refusedFrom.size > 0;
  }

  /** Records that `message` was refused with `thrown`, when its producer will send it again. */
  refused(message: PublishMessage | undefined, thrown: unknown): void {
    if (message === undefined || message.producerName === '' || !resentAfter(thrown)) return;
    const key = fenceKey(message);
    const known = this.refusedFrom.get(key);
    if (known !== undefined && known <= message.sequenceId) return;
    this.refusedFrom.delete(key);
    this.refusedFrom.set(key, message.sequenceId);
    if (this.refusedFrom.size > MAX_FENCED_PRODUCERS) this.refusedFrom.delete(this.refusedFrom.keys().next().value!);
  }

  /** SEQUENCE_GAP when `message` would overtake an earlier entry of its producer this stream refused. */
  overtaking(message: PublishMessage): LedgerlineError | undefined {
    // Almost always nothing is fenced: no key is built for every entry on the hot path then.
    if (this.refusedFrom.size === 0 || message.producerName === '') return undefined;
    const key = fenceKey(message);
    const from = this.refusedFrom.get(key);
    if (from === undefined) return undefined;
    if (message.sequenceId <= from) {
      this.refusedFrom.delete(key); // The refused entry comes again: the order is whole from here.
      return undefined;
    }
    return sequenceGap(message.producerName, message.sequenceId, from);
  }
}
