import { LedgerlineError } from '@ledgerline/errors';
import { comparePositions, formatPosition, type Position } from '../../position.js';
import type { AppendRecorder } from './append-recorder.js';
import type { Owner } from './owners.js';
import type { Random } from './random.js';

/**
 * A subscription in an append history, so the owners trim behind it (with
 * retention 0): it acknowledges cumulatively up to appends clients saw
 * acknowledged. What it acknowledged is the truth a trim is checked
 * against: no ledger holding an acknowledged append past it may be marked.
 */
export class HistoryConsumer {
  private consumedUpTo: Position | undefined;

  constructor(readonly name = 'sub') {}

  /** Creates the cursor at the earliest entry on the first owner; later owners recover it. */
  async attach(owner: Owner): Promise<void> {
    await owner.ml.openCursor(this.name, { start: { initialPosition: 'earliest' } });
  }

  /** Acknowledges up to an acknowledged append past what was consumed, on the current owner. */
  ack(owner: Owner, recorder: AppendRecorder, rng: Random): void {
    const cursor = owner.ml.getCursor(this.name);
    const ahead = [...recorder.acknowledged.values()]
      .map((a) => a.position)
      .filter((p) => this.consumedUpTo === undefined || comparePositions(p, this.consumedUpTo) > 0)
      .sort(comparePositions);
    if (cursor === undefined || ahead.length === 0) return;
    const target = ahead[rng.int(0, Math.min(ahead.length - 1, 20))]!;
    try {
      cursor.ackCumulative(target);
    } catch (err) {
      // A cursor that is fenced or closed, or a ledger this owner has not seen: nothing was acknowledged.
      if (err instanceof LedgerlineError) return;
      throw err;
    }
    this.consumedUpTo = target;
  }

  /** Every acknowledged append in a trimmed ledger was consumed by this cursor. */
  checkTrimmed(trimmed: ReadonlySet<number>, recorder: AppendRecorder): string[] {
    const violations: string[] = [];
    for (const [payload, acked] of recorder.acknowledged) {
      if (!trimmed.has(acked.position.ledgerId)) continue;
      const consumed = this.consumedUpTo !== undefined && comparePositions(acked.position, this.consumedUpTo) <= 0;
      if (!consumed) {
        violations.push(
          `${payload} at ${formatPosition(acked.position)} was trimmed before cursor ${this.name} consumed it`,
        );
      }
    }
    return violations;
  }
}
