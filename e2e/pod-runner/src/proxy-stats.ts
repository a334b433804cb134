/** How many of a Service's last upstream failures are kept for a stalled run's report. */
const KEPT_FAILURES = 5;

/** Why a proxied connection did not reach a pod, or lost it. */
export type ProxyFailure = 'connect-failed' | 'connect-timeout' | 'dropped';

/**
 * What a Service's proxy did with the connections it accepted. A stall of
 * clients talking to a Service reads differently here by its cause: no
 * accepts at all since some time (the connections never reached the node:
 * routing, neighbour entries, the bridge), refusals (no ready endpoint), or
 * upstream failures and timeouts (the node cannot reach the pod it picked).
 * Every upstream failure (and the first refusal of a row) is logged as it
 * happens too, so it lands in the run's recent events with its time.
 */
export class ProxyStats {
  accepted = 0;
  forwarded = 0;
  refused = 0;
  connectFailed = 0;
  connectTimedOut = 0;
  dropped = 0;
  /** When each client address last had a connection accepted: a pod whose connections stopped arriving shows here. */
  private readonly lastAcceptedFrom = new Map<string, number>();
  private readonly failures: string[] = [];
  /** Refusals since the last forwarded connection: only the first of a row is logged. */
  private refusedInRow = 0;

  constructor(
    private readonly service: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  accept(clientAddress: string): void {
    this.accepted++;
    this.lastAcceptedFrom.set(clientAddress, Date.now());
  }

  forward(): void {
    this.forwarded++;
    if (this.refusedInRow > 1)
      this.log(`Service ${this.service}: forwarding again after ${this.refusedInRow} refusals`);
    this.refusedInRow = 0;
  }

  /**
   * No ready endpoint: the connection from `client` was closed at once. Clients
   * retry every few seconds while a Service has no pod (every start-up), so
   * only the first refusal of a row is logged, lest they push the run's other
   * events out of its timeline; the count has them all.
   */
  refuse(client: string): void {
    this.refused++;
    if (this.refusedInRow++ === 0) this.log(`Service ${this.service}: refused ${client}: no ready endpoint`);
  }

  /** The connection from `client` to `pod` failed `afterMs` after it was accepted. */
  fail(kind: ProxyFailure, client: string, pod: string, afterMs: number, reason: string): void {
    if (kind === 'connect-failed') this.connectFailed++;
    else if (kind === 'connect-timeout') this.connectTimedOut++;
    else this.dropped++;
    const line = `Service ${this.service}: ${kind} ${client} -> ${pod} after ${afterMs} ms: ${reason}`;
    this.failures.push(`${new Date().toISOString()} ${line}`);
    if (this.failures.length > KEPT_FAILURES) this.failures.shift();
    this.log(line);
  }

  /** One line of counts, one of when each client was last accepted, then the last failures with their times. */
  describe(now = Date.now()): string[] {
    const lastFrom = [...this.lastAcceptedFrom].map(([address, atMs]) => `${address} ${now - atMs} ms ago`);
    return [
      `Service ${this.service}: accepted ${this.accepted}, forwarded ${this.forwarded}, ` +
        `refused (no endpoint) ${this.refused}, connect failed ${this.connectFailed}, ` +
        `connect timed out ${this.connectTimedOut}, dropped by the pod ${this.dropped}`,
      `  last accepted from: ${lastFrom.length === 0 ? 'nobody' : lastFrom.join(', ')}`,
      ...this.failures.map((failure) => `  ${failure}`),
    ];
  }
}
