import { encodeLacAdvanced, ledgerLacSubject, type Bus } from '@ledgerline/bus';
import { unexpectedRejection } from '@ledgerline/errors';

interface Pending {
  ledgerId: number;
  entryId: number;
  offset: number;
  /** Wall-clock time the store confirmed the entry: read-only owners measure LAC propagation from it. */
  confirmedAtMs: number;
}

/**
 * "Last add confirmed advanced" hints for read-only owners, coalesced: the
 * first advance waits one event-loop turn (every receipt of one store write
 * settles in the same turn, so a write costs one hint, not one per entry), at
 * most one publish is in flight per topic, and advances that arrive meanwhile
 * collapse into the newest, sent when the one in flight is done. Hints only:
 * a reader that misses one still polls.
 */
export class LacNotifier {
  private inFlight = false;
  private next: Pending | undefined;

  /** `published` hears, for each hint sent, how long after its entry was stored it went out. */
  constructor(
    private readonly bus: Bus | undefined,
    private readonly published: (delayMs: number) => void = () => undefined,
  ) {}

  advanced(ledgerId: number, entryId: number, offset: number): void {
    if (this.bus === undefined) return;
    this.next = { ledgerId, entryId, offset, confirmedAtMs: Date.now() };
    if (this.inFlight) return;
    this.inFlight = true;
    setImmediate(() => this.drain().catch(unexpectedRejection));
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
