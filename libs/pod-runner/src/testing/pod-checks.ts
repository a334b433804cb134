import { LookupService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import type { PodRunner } from '../pod-runner.js';

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

/** The longest time between consecutive instants (sorted). */
export function longestStretch(instants: readonly number[]): number {
  let longest = 0;
  for (let index = 1; index < instants.length; index++)
    longest = Math.max(longest, instants[index]! - instants[index - 1]!);
  return longest;
}

/** The longest stretch without an acknowledgement from the last one before `fromMs` to `toMs`. */
export function stretchAcross(acks: readonly { atMs: number }[], fromMs: number, toMs: number): number {
  const during = acks.filter((ack) => ack.atMs >= fromMs && ack.atMs <= toMs).map((ack) => ack.atMs);
  const lastBefore = Math.max(...acks.filter((ack) => ack.atMs < fromMs).map((ack) => ack.atMs));
  return longestStretch([lastBefore, ...during.sort((a, b) => a - b)]);
}
