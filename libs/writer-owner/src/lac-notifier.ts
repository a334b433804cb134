import { encodeLacAdvanced, ledgerLacSubject, type Bus } from '@ledgerline/bus';
import { unexpectedRejection } from '@ledgerline/errors';

interface Pending {
  ledgerId: number;
  entryId: number;
  offset: number;
  /** Wall-clock time the store confirmed the entry: read-only owners measure LAC propagation from it. */
  confirmedAtMs: number;
}

/** Runs `send` in a later turn of the event loop. */
export type LacTurn = (send: () => void) => void;

/**
 * One turn shared by many notifiers (every topic of an owner): the hints due
 * are all sent from one callback, one after another with nothing awaited in
 * between, so the NATS client writes them to its socket together (it flushes
 * once the callback's microtasks run). A setImmediate per topic gave each
 * hint a write of its own: with 16 topics, 16 writes a turn.
 */
export function sharedLacTurn(): LacTurn {
  let due: Array<() => void> = [];
  return (send) => {
    due.push(send);
    if (due.length > 1) return;
    setImmediate(() => {
      const sending = due;
      due = [];
      for (const next of sending) next();
    });
  };
}

/** A turn of the notifier's own, for a notifier that shares none. */
const ownTurn: LacTurn = (send) => setImmediate(send);

/**
 * "Last add confirmed advanced" hints for read-only owners, coalesced: the
 * first advance waits one event-loop turn (its `turn`) (every receipt of one store write
 * settles in the same turn, so a write costs one hint, not one per entry), at
 * most one publish is in flight per topic, and advances that arrive meanwhile
 * collapse into the newest, sent when the one in flight is done. Hints only:
 * a reader that misses one still polls.
 */
export class LacNotifier {
  private inFlight = false;
  private next: Pending | undefined;

  /**
   * `published` hears, for each hint sent, how long after its entry was stored it went out; `turn` is when hints
   * go out (a sharedLacTurn for the topics of one owner).
   */
  constructor(
    private readonly bus: Bus | undefined,
    private readonly published: (delayMs: number) => void = () => undefined,
    private readonly turn: LacTurn = ownTurn,
  ) {}

  advanced(ledgerId: number, entryId: number, offset: number): void {
    if (this.bus === undefined) return;
    this.next = { ledgerId, entryId, offset, confirmedAtMs: Date.now() };
    if (this.inFlight) return;
    this.inFlight = true;
    // drain publishes its first hint before it awaits anything: in a shared turn, every topic's goes out together.
    this.turn(() => this.drain().catch(unexpectedRejection));
  }

  private async drain(): Promise<void> {
    try {
      while (this.next !== undefined) {
        const { ledgerId, entryId, offset, confirmedAtMs } = this.next;
        this.next = undefined;
        await this.bus!.publish(
          ledgerLacSubject(ledgerId),
          encodeLacAdvanced({ ledgerId, lac: entryId, offset, confirmedAtMs }),
        ).then(
          () => this.published(Date.now() - confirmedAtMs),
          () => undefined,
        );
      }
    } finally {
      this.inFlight = false;
    }
  }
}
