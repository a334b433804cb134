/** One acknowledged send as the workload saw it: the ledger its receipt names, when it was sent and answered. */
export interface OwnedAck {
  ledgerId: bigint;
  duplicate: boolean;
  sentAtMs: number;
  atMs: number;
}

/**
 * Acknowledgements that show two owners acknowledging one topic at once:
 * a send acknowledged in a ledger older than one that had already answered
 * a send before it went out. Every owner writes a ledger of its own, and
 * ledger ids only grow, so a newer ledger acknowledging means a newer owner
 * took the topic (fencing the older ledger); a send that left after that and
 * still landed in the older ledger was acknowledged by the old owner while the
 * new one served. Duplicates are left out: a new owner answers a resend with
 * the original's place, in the old ledger. Sound from the client's side alone,
 * with no clock but the workload's own.
 */
export function acksFromSupersededOwners(acks: readonly OwnedAck[]): number {
  const firstAnswerOf = new Map<bigint, number>();
  for (const ack of acks) {
    if (ack.duplicate || ack.ledgerId < 0n) continue;
    const known = firstAnswerOf.get(ack.ledgerId);
    if (known === undefined || ack.atMs < known) firstAnswerOf.set(ack.ledgerId, ack.atMs);
  }
  // For each ledger, the earliest answer from any newer ledger: one pass from the newest down.
  const ledgers = [...firstAnswerOf.keys()].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const newerAnsweredAt = new Map<bigint, number>();
  let earliest = Infinity;
  for (const ledger of ledgers) {
    newerAnsweredAt.set(ledger, earliest);
    earliest = Math.min(earliest, firstAnswerOf.get(ledger)!);
  }
  return acks.filter(
    (ack) => !ack.duplicate && ack.ledgerId >= 0n && ack.sentAtMs > (newerAnsweredAt.get(ack.ledgerId) ?? Infinity),
  ).length;
}
