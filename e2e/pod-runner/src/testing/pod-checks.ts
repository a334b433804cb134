import { LookupService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import type { PodRunner } from '../pod-runner.js';
import type { WorkloadSummary } from './pod-workload.js';

/** The writer owner pod `topic` is served from now, asked of a ready metadata pod directly. */
export async function ownerPodOf(runner: PodRunner, topic: string): Promise<string> {
  const metadata = runner.podsOf('ledgerline-metadata').find((pod) => pod.ready)!;
  const lookup = createClient(LookupService, `${metadata.ip}:6650`);
  try {
    const { advertisedAddress } = await lookup.lookupTopic({ topic });
    return runner.podsOf('ledgerline-writer-owner').find((pod) => `${pod.ip}:6650` === advertisedAddress)!.name;
  } finally {
    closeClient(lookup);
  }
}

/**
 * The writer owner pod a lookup of `topic` names once it is no longer `from`, asked every 100 ms;
 * `from` when `timeoutMs` passed first. A lookup that fails while the topic moves is asked again,
 * as a client would.
 */
export async function ownerMovedOff(
  runner: PodRunner,
  topic: string,
  from: string,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let named = from;
  while (named === from && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    named = await ownerPodOf(runner, topic).catch(() => from);
  }
  return named;
}

/** The longest time between consecutive instants (sorted). */
export function longestStretch(instants: readonly number[]): number {
  let longest = 0;
  for (let index = 1; index < instants.length; index++)
    longest = Math.max(longest, instants[index]! - instants[index - 1]!);
  return longest;
}

/**
 * The longest stretch without an acknowledgement from the last one before
 * `fromMs` to `toMs` (the end of the window counts: a stall that outlasts it
 * is a stretch up to it).
 */
export function stretchAcross(acks: readonly { atMs: number }[], fromMs: number, toMs: number): number {
  const during = acks.filter((ack) => ack.atMs >= fromMs && ack.atMs <= toMs).map((ack) => ack.atMs);
  // A loop, not Math.max(...): a run acknowledges far more messages than a call takes arguments.
  let lastBefore = -Infinity;
  for (const ack of acks) if (ack.atMs < fromMs && ack.atMs > lastBefore) lastBefore = ack.atMs;
  if (lastBefore === -Infinity) lastBefore = fromMs;
  return longestStretch([lastBefore, ...during.sort((a, b) => a - b), toMs]);
}

/**
 * The model check of a pod test: what must be zero after any fault. Nothing
 * acknowledged lost, nothing stored twice, offsets contiguous, every ack's
 * offset where its message is stored, every acknowledged message consumed,
 * none delivered again after its consumer ack was persisted, and never two
 * owners acknowledging the topic at the same time.
 */
export function modelViolations(summary: WorkloadSummary): Record<string, number> {
  return {
    lost: summary.lost,
    duplicated: summary.duplicated,
    gaps: summary.gaps,
    misplaced: summary.misplaced,
    unconsumed: summary.unconsumed,
    redeliveredAfterAck: summary.redeliveredAfterAck,
    overlappingOwners: summary.overlappingOwners,
  };
}

export const NO_VIOLATIONS = {
  lost: 0,
  duplicated: 0,
  gaps: 0,
  misplaced: 0,
  unconsumed: 0,
  redeliveredAfterAck: 0,
  overlappingOwners: 0,
} as const;

/** The figures every pod test prints, in one wording. */
export function summaryFigures(summary: WorkloadSummary): string {
  return (
    `acked ${summary.acked}, failed ${summary.failed}, lost ${summary.lost}, duplicated ${summary.duplicated}, ` +
    `gaps ${summary.gaps}, misplaced ${summary.misplaced}, unconsumed ${summary.unconsumed}, ` +
    `redelivered after ack ${summary.redeliveredAfterAck}, consumer stops ${summary.consumerStops.length}, ` +
    `two owners acknowledging at once ${summary.overlappingOwners}, ` +
    `longest stretch without an ack ${summary.longestGapMs} ms` +
    (summary.storedTwice.length === 0 ? '' : `; stored twice: ${summary.storedTwice.join('; ')}`)
  );
}
