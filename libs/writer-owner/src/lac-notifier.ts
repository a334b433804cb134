import { encodeLacAdvanced, ledgerLacSubject, type Bus } from '@ledgerline/bus';

interface Pending {
  ledgerId: number;
  entryId: number;
  offset: number;
}

/**
 * "Last add confirmed advanced" hints for read-only owners, coalesced: at most
 * one publish in flight per topic; advances that arrive meanwhile collapse
 * into the newest, sent when the one in flight is done. Hints only: a reader
 * that misses one still polls.
 */
export class LacNotifier {
  private inFlight = false;
  private next: Pending | undefined;

  constructor(private readonly bus: Bus | undefined) {}

  advanced(ledgerId: number, entryId: number, offset: number): void {
    if (this.bus === undefined) return;
    this.next = { ledgerId, entryId, offset };
    if (!this.inFlight) void this.drain();
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.next !== undefined) {
        const { ledgerId, entryId, offset } = this.next;
        this.next = undefined;
        await this.bus!.publish(
          ledgerLacSubject(ledgerId),
          encodeLacAdvanced({ ledgerId, lac: entryId, offset }),
        ).catch(() => undefined);
      }
    } finally {
      this.inFlight = false;
    }
  }
}
