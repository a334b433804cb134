import type { LedgerlineError } from '@ledgerline/errors';
import type { ConsumerSink, Delivery, DispatchEntry } from '../types.js';

/** A consumer sink that records what it was sent. */
export class RecordingSink<E extends DispatchEntry> implements ConsumerSink<E> {
  readonly deliveries: Delivery<E>[] = [];
  readonly activeChanges: boolean[] = [];
  closedWith: LedgerlineError | undefined;
  /** Called on every delivery (a test consumer acking as it receives). */
  onDeliver: ((delivery: Delivery<E>) => void) | undefined;

  deliver(delivery: Delivery<E>): void {
    this.deliveries.push(delivery);
    this.onDeliver?.(delivery);
  }

  activeChanged(active: boolean): void {
    this.activeChanges.push(active);
  }

  close(error: LedgerlineError): void {
    this.closedWith = error;
  }

  /** Entry ids delivered, in order. */
  entryIds(): number[] {
    return this.deliveries.map((d) => d.entry.position.entryId);
  }

  /** Takes the deliveries recorded so far, leaving none. */
  drain(): Delivery<E>[] {
    return this.deliveries.splice(0, this.deliveries.length);
  }
}
