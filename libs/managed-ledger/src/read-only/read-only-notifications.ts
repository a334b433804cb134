import {
  decodeLacAdvanced,
  decodeManagedLedgerNotification,
  ledgerLacSubject,
  managedLedgerSubject,
  metadataChangedSubject,
  type Bus,
  type BusSubscription,
  type LacAdvancedNotification,
} from '@ledgerline/bus';

/** What a read-only view does with the hints it hears. */
export interface NotificationHandlers {
  /** ManagedLedgerInfo changed: at `version` when the writer said so, undefined when the metadata service did. */
  infoChanged(version: number | undefined): void;
  lacAdvanced(notification: LacAdvancedNotification): void;
  warn(error: unknown): void;
}

/**
 * The bus subscriptions through which a read-only view tails its writer:
 * the writer's own hints (rolled, trimmed), the metadata service's change
 * of the node (deleted, terminated), and "LAC advanced" for each ledger
 * still open. Without a bus the view relies on its timers alone.
 */
export class ReadOnlyNotifications {
  private readonly infoSubscriptions: BusSubscription[] = [];
  private readonly lacSubscriptions = new Map<number, BusSubscription>();
  private closed = false;

  constructor(
    private readonly bus: Bus | undefined,
    private readonly handlers: NotificationHandlers,
  ) {}

  /** Listens for changes of the ManagedLedgerInfo of managed ledger `name` at `path`. */
  listenInfo(name: string, path: string): void {
    const bus = this.bus;
    if (bus === undefined) return;
    const fromWriter = bus.subscribe(managedLedgerSubject(name));
    const fromMetadata = bus.subscribe(metadataChangedSubject(path));
    this.infoSubscriptions.push(fromWriter, fromMetadata);
    this.consume(fromWriter, (data) => this.handlers.infoChanged(decodeManagedLedgerNotification(data).version));
    this.consume(fromMetadata, () => this.handlers.infoChanged(undefined));
  }

  /** Listens for the LAC of a ledger still open (once per ledger). */
  listenLac(ledgerId: number): void {
    const bus = this.bus;
    if (bus === undefined || this.lacSubscriptions.has(ledgerId) || this.closed) return;
    const subscription = bus.subscribe(ledgerLacSubject(ledgerId));
    this.lacSubscriptions.set(ledgerId, subscription);
    this.consume(subscription, (data) => this.handlers.lacAdvanced(decodeLacAdvanced(data)));
  }

  /** The ledger is closed in ManagedLedgerInfo: its LAC no longer changes. */
  forgetLedger(ledgerId: number): void {
    this.lacSubscriptions.get(ledgerId)?.unsubscribe();
    this.lacSubscriptions.delete(ledgerId);
  }

  close(): void {
    this.closed = true;
    for (const subscription of this.infoSubscriptions) subscription.unsubscribe();
    for (const subscription of this.lacSubscriptions.values()) subscription.unsubscribe();
    this.lacSubscriptions.clear();
  }

  /** Runs `handle` for each message until the subscription ends; a malformed notification is logged, not fatal. */
  private consume(subscription: BusSubscription, handle: (data: Uint8Array) => void): void {
    void (async () => {
      for await (const message of subscription) {
        try {
          handle(message.data);
        } catch (error) {
          this.handlers.warn(error);
        }
      }
    })().catch((error: unknown) => this.handlers.warn(error));
  }
}
