/**
 * An owner's load as it reports it with its keep-alive: what a balancer
 * compares between the owners of a group, and what `ledgerline owners list`
 * and the owners' metrics show. Rates and the CPU share are over
 * `intervalMs`, the time since the previous sample.
 */
export interface OwnerLoad {
  topicsOwned: number;
  messagesInPerSecond: number;
  bytesInPerSecond: number;
  messagesOutPerSecond: number;
  bytesOutPerSecond: number;
  /** Open consume streams. */
  consumers: number;
  /** Entries taken and not yet stored (0 on a read-only owner, which stores nothing). */
  pendingEntries: number;
  /** Bytes of entries in the ledgers of the topics held now (0 on a read-only owner, which stores nothing). */
  storageBytes: number;
  /** CPU time of this process over wall time: 1 is one core busy for the whole interval. */
  cpuShare: number;
  intervalMs: number;
  /** The busiest topics over the interval, busiest first, at most BUSIEST_TOPICS_REPORTED; none idle. */
  busiestTopics: readonly TopicLoad[];
}

/** One topic's traffic over a load interval: messages stored plus messages delivered, per second. */
export interface TopicLoad {
  topic: string;
  messagesPerSecond: number;
}

/** How many of its busiest topics an owner reports: enough to shed by, small enough for every keep-alive. */
export const BUSIEST_TOPICS_REPORTED = 16;

/**
 * What an owner counts for its load. The four traffic figures are running
 * totals since the owner started (they never go down: a balancer must not see
 * a topic's unload as negative traffic); the rest are what holds now.
 */
export interface LoadTotals {
  messagesIn: number;
  bytesIn: number;
  messagesOut: number;
  bytesOut: number;
  topicsOwned: number;
  pendingEntries: number;
  /** Bytes of entries in the held topics' ledgers now; a reader that stores nothing leaves it out (0). */
  storageBytes?: number;
  /** Running totals of messages in and out per topic held now (by lease name); none reported without it. */
  topicMessages?: ReadonlyMap<string, number>;
}

export type LoadSource = () => LoadTotals | Promise<LoadTotals>;

export interface LoadMeterOptions {
  now?: () => number;
  /** The process's CPU time in microseconds (user + system); default process.cpuUsage. */
  cpuMicros?: () => number;
}

/** An idle owner's load: what is reported before the first interval ends. */
export const IDLE_LOAD: OwnerLoad = Object.freeze({
  topicsOwned: 0,
  messagesInPerSecond: 0,
  bytesInPerSecond: 0,
  messagesOutPerSecond: 0,
  bytesOutPerSecond: 0,
  consumers: 0,
  pendingEntries: 0,
  storageBytes: 0,
  cpuShare: 0,
  intervalMs: 0,
  busiestTopics: Object.freeze([]),
});

/**
 * The busiest topics between two samples. A topic absent from the previous
 * sample (loaded meanwhile) is left out until the next one: the counters of a
 * topic that comes back to an owner still hold its traffic from before.
 */
function busiestTopics(
  now: ReadonlyMap<string, number> | undefined,
  was: ReadonlyMap<string, number> | undefined,
  intervalMs: number,
): TopicLoad[] {
  if (now === undefined || was === undefined || intervalMs <= 0) return [];
  const loads: TopicLoad[] = [];
  for (const [topic, total] of now) {
    const before = was.get(topic);
    if (before === undefined) continue;
    const messagesPerSecond = perSecond(total - before, intervalMs);
    if (messagesPerSecond > 0) loads.push({ topic, messagesPerSecond });
  }
  loads.sort((a, b) => b.messagesPerSecond - a.messagesPerSecond);
  return loads.slice(0, BUSIEST_TOPICS_REPORTED);
}

function processCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function perSecond(delta: number, intervalMs: number): number {
  return intervalMs <= 0 ? 0 : (Math.max(0, delta) * 1000) / intervalMs;
}

/**
 * Turns an owner's running totals into its load: each `sample()` measures
 * the rates and the process's CPU share since the previous one (the owner
 * session samples once per keep-alive); `latest` is the last sample, which the
 * metrics export, so a scrape never shortens the keep-alive's interval.
 * Consumers are counted by the streams passed through `countConsumer`.
 */
export class LoadMeter {
  private readonly now: () => number;
  private readonly cpuMicros: () => number;
  private previous: { atMs: number; cpuMicros: number; totals: LoadTotals } | undefined;
  private openConsumers = 0;
  private last: OwnerLoad = IDLE_LOAD;

  constructor(
    private readonly source: LoadSource,
    options: LoadMeterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.cpuMicros = options.cpuMicros ?? processCpuMicros;
  }

  /** The load measured by the last sample (idle before the first). */
  get latest(): OwnerLoad {
    return this.last;
  }

  get consumers(): number {
    return this.openConsumers;
  }

  /** Measures the load since the previous sample; the first sample only sets the starting point. */
  async sample(): Promise<OwnerLoad> {
    const totals = await this.source();
    const atMs = this.now();
    const cpuMicros = this.cpuMicros();
    const previous = this.previous;
    this.previous = { atMs, cpuMicros, totals };
    const intervalMs = previous === undefined ? 0 : Math.max(0, atMs - previous.atMs);
    const was = previous?.totals ?? totals;
    this.last = {
      topicsOwned: totals.topicsOwned,
      messagesInPerSecond: perSecond(totals.messagesIn - was.messagesIn, intervalMs),
      bytesInPerSecond: perSecond(totals.bytesIn - was.bytesIn, intervalMs),
      messagesOutPerSecond: perSecond(totals.messagesOut - was.messagesOut, intervalMs),
      bytesOutPerSecond: perSecond(totals.bytesOut - was.bytesOut, intervalMs),
      consumers: this.openConsumers,
      pendingEntries: totals.pendingEntries,
      storageBytes: totals.storageBytes ?? 0,
      cpuShare: previous === undefined ? 0 : perSecond(cpuMicros - previous.cpuMicros, intervalMs) / 1_000_000,
      intervalMs,
      busiestTopics: busiestTopics(totals.topicMessages, previous?.totals.topicMessages, intervalMs),
    };
    return this.last;
  }

  /** Passes a consume stream through, counting it as one consumer while it is open. */
  async *countConsumer<T>(stream: AsyncIterable<T>): AsyncIterable<T> {
    this.openConsumers++;
    try {
      yield* stream;
    } finally {
      this.openConsumers--;
    }
  }
}
