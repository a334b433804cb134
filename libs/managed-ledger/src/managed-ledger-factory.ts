import { managedLedgerPath, TopicName } from '@ledgerline/naming';
import type { ManagedLedgerConfigInput } from './config.js';
import type { ManagedLedgerDependencies } from './context.js';
import { ManagedLedger } from './managed-ledger.js';
import type { HandOverState } from './hand-over-state.js';

export interface FactoryOpenOptions {
  /** The namespace's numberOfTopicBuckets (PIP-157); 1 when omitted. */
  numberOfTopicBuckets?: number;
  /** What the previous owner's close left (a transfer's LoadTopic): see hand-over-state.ts. */
  handedOver?: HandOverState;
}

/**
 * What an owner process holds: its dependencies, default config, and the
 * managed ledgers it has open, one per topic (opening a topic it already
 * holds returns the same instance; opening twice at once opens once).
 */
export class ManagedLedgerFactory {
  private readonly opened = new Map<string, Promise<ManagedLedger>>();

  constructor(
    private readonly deps: ManagedLedgerDependencies,
    private readonly defaultConfig: ManagedLedgerConfigInput = {},
  ) {}

  /** Opens (and so owns) a topic's managed ledger with `config` over the factory's defaults. */
  open(
    topic: string | TopicName,
    config: ManagedLedgerConfigInput = {},
    options: FactoryOpenOptions = {},
  ): Promise<ManagedLedger> {
    const topicName = typeof topic === 'string' ? TopicName.parse(topic) : topic;
    const buckets = options.numberOfTopicBuckets ?? 1;
    const path = managedLedgerPath(topicName, buckets);
    const known = this.opened.get(path);
    if (known !== undefined) return known;
    const merged = { ...this.defaultConfig, ...config, cursor: { ...this.defaultConfig.cursor, ...config.cursor } };
    const opening = ManagedLedger.open(topicName, this.deps, {
      config: merged,
      numberOfTopicBuckets: buckets,
      ...(options.handedOver === undefined ? {} : { handedOver: options.handedOver }),
    });
    this.opened.set(path, opening);
    opening.catch(() => this.opened.delete(path));
    return opening;
  }

  /** The managed ledger of a topic this factory holds, if it finished opening. */
  async get(topic: string | TopicName, options: FactoryOpenOptions = {}): Promise<ManagedLedger | undefined> {
    const path = managedLedgerPath(topic, options.numberOfTopicBuckets ?? 1);
    return this.opened.get(path)?.catch(() => undefined);
  }

  /** Closes one topic's managed ledger and forgets it (ownership released or lost). */
  async closeLedger(topic: string | TopicName, options: FactoryOpenOptions = {}): Promise<void> {
    const path = managedLedgerPath(topic, options.numberOfTopicBuckets ?? 1);
    const ledger = await this.opened.get(path)?.catch(() => undefined);
    this.opened.delete(path);
    await ledger?.close();
  }

  /** Closes every managed ledger this factory holds. */
  async close(): Promise<void> {
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.allSettled(all.map(async (opening) => (await opening).close()));
  }
}
