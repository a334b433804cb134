import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest random weight) hashing: every candidate gets a score
 * from a hash of (candidate, key) and the highest wins. Topics spread evenly
 * over the candidates, and when one joins or leaves only the topics it wins
 * or held move.
 */
export function rendezvousPick<T>(
  candidates: readonly T[],
  idOf: (candidate: T) => string,
  key: string,
): T | undefined {
  let best: T | undefined;
  let bestScore = -1n;
  for (const candidate of candidates) {
    const score = createHash('sha256').update(idOf(candidate)).update('\0').update(key).digest().readBigUInt64BE(0);
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
