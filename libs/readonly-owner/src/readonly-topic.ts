import { LedgerlineError } from '@ledgerline/errors';
import type { ReadOnlyManagedLedger } from '@ledgerline/managed-ledger';
import { TopicName } from '@ledgerline/naming';
import { OwnerReason, topicUnloaded, type SubscriptionStart, type WriterEntry } from '@ledgerline/ownership';
import { Subscription } from '@ledgerline/subscriptions';
import type { ReadOnlySettings } from './config.js';
import { RemoteCursorSource } from './remote-cursor-source.js';
import type { WriterClients } from './writer-clients.js';

export interface ReadOnlyTopicOptions {
  /** The topic's name in the reader namespace (what the lease is held on). */
  readerTopic: string;
  /** The writer topic whose managed ledger is read and whose owner keeps the cursors. */
  writerTopic: string;
  view: ReadOnlyManagedLedger;
  writer: WriterClients;
  settings: ReadOnlySettings;
  logger: { warn(details: object, message: string): void; info(details: object, message: string): void };
  onUnloaded: (topic: ReadOnlyTopic) => void;
}

interface OpenSubscription {
  subscription: Subscription<WriterEntry>;
  source: RemoteCursorSource;
}

/**
 * A reader-namespace topic served here: the read-only view of its writer
 * topic's managed ledger and the subscriptions consumed through this owner,
 * each over a RemoteCursorSource (the cursor stays on the writer owner).
 */
export class ReadOnlyTopic {
  private readonly subscriptions = new Map<string, Promise<OpenSubscription>>();
  private readonly settled = new Map<string, OpenSubscription>();
  private unloading: Promise<void> | undefined;
  private handOvers = 0;

  constructor(private readonly options: ReadOnlyTopicOptions) {
    options.view.onDeleted((error) => {
      const gone = new LedgerlineError('NOT_FOUND', OwnerReason.TOPIC_UNLOADED, `${this.writerTopic} was deleted`, {
        details: { topic: this.writerTopic },
        cause: error,
      });
      this.unload('the writer topic was deleted', gone).catch(() => undefined);
    });
  }

  get readerTopic(): string {
    return this.options.readerTopic;
  }

  get writerTopic(): string {
    return this.options.writerTopic;
  }

  get view(): ReadOnlyManagedLedger {
    return this.options.view;
  }

  get isUnloaded(): boolean {
    return this.unloading !== undefined;
  }

  /**
   * True while a transfer moves this topic away. The transfer hands the lease
   * over itself and then ends the consumers with NOT_OWNER naming the target;
   * a lease check that saw the lease gone first would end them with
   * TOPIC_UNLOADED instead, sending every client through a lookup.
   */
  get handingOver(): boolean {
    return this.handOvers > 0;
  }

  /** Runs `move` with the topic marked as handing over (lease checks leave it alone meanwhile). */
  async whileHandingOver<T>(move: () => Promise<T>): Promise<T> {
    this.handOvers++;
    try {
      return await move();
    } finally {
      this.handOvers--;
    }
  }

  /** The subscription, opened here on first use: CreateCursor on the writer, then waitSync. */
  open(name: string, start: SubscriptionStart): Promise<OpenSubscription> {
    if (this.unloading !== undefined) return Promise.reject(topicUnloaded(this.readerTopic, 'it is unloading'));
    const known = this.subscriptions.get(name);
    if (known !== undefined) return known;
    const opening = RemoteCursorSource.open(
      {
        view: this.options.view,
        writerTopic: this.writerTopic,
        subscription: name,
        writer: this.options.writer,
        settings: this.options.settings,
        logger: this.options.logger,
      },
      start,
    ).then((source) => {
      const subscription = new Subscription<WriterEntry>({
        name,
        source,
        partitionIndex: Math.max(0, TopicName.parse(this.writerTopic).partitionIndex),
        onError: (error) =>
          this.options.logger.warn(
            { topic: this.readerTopic, subscription: name, reason: error.reason },
            error.message,
          ),
      });
      const open = { subscription, source };
      this.settled.set(name, open);
      return open;
    });
    this.subscriptions.set(name, opening);
    opening.catch(() => this.subscriptions.delete(name));
    return opening;
  }

  /** The subscription if it is open here. */
  live(name: string): OpenSubscription | undefined {
    return this.settled.get(name);
  }

  liveSubscriptions(): [string, OpenSubscription][] {
    return [...this.settled];
  }

  /** Closes one subscription (unsubscribed): its consumers end with `error`, its unsent acks are sent. */
  async drop(name: string, error: LedgerlineError): Promise<void> {
    const opening = this.subscriptions.get(name);
    this.subscriptions.delete(name);
    this.settled.delete(name);
    const open = await opening?.catch(() => undefined);
    if (open === undefined) return;
    await open.subscription.close(error);
    await open.source.close();
  }

  /**
   * Stops serving: consumers are closed with `error` (TOPIC_UNLOADED by
   * default, so clients look up again), acks taken here are sent one last
   * time, and the view stops listening.
   */
  unload(why: string, error: LedgerlineError = topicUnloaded(this.readerTopic, why)): Promise<void> {
    this.unloading ??= (async () => {
      const names = [...this.subscriptions.keys()];
      await Promise.all(names.map((name) => this.drop(name, error)));
      this.options.view.close();
      this.options.onUnloaded(this);
      this.options.logger.info({ topic: this.readerTopic, why }, 'topic unloaded');
    })();
    return this.unloading;
  }
}
