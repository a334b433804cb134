import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import type { ConsumeRequestSchema, ConsumeResponse, Entry, TopicsService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';

type Request = MessageInitShape<typeof ConsumeRequestSchema>;

/** Bound on every wait of a test consumer. */
const WAIT_MS = 20_000;

/**
 * A consumer over one Consume stream, driven by hand from a test: it
 * collects what arrives and waits (bounded) for conditions on it.
 */
export class TestConsumer {
  readonly entries: Entry[] = [];
  readonly events: ConsumeResponse[] = [];
  error: LedgerlineError | undefined;
  ended = false;
  /** Called with each entry as it arrives, before any waiter looks (a test that checks every delivery). */
  onEntry: ((entry: Entry) => void) | undefined;
  private readonly queue: Request[] = [];
  private wakeWriter: (() => void) | undefined;
  private readonly listeners = new Set<() => void>();
  private closed = false;

  constructor(client: Client<typeof TopicsService>, subscribe: Request['command'] & { case: 'subscribe' }) {
    this.queue.push({ command: subscribe });
    this.run(client).catch(unexpectedRejection);
  }

  private async *requests(): AsyncIterable<Request> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wakeWriter = resolve));
    }
  }

  private async run(client: Client<typeof TopicsService>): Promise<void> {
    try {
      for await (const response of client.consume(this.requests())) {
        this.events.push(response);
        if (response.event.case === 'entry') {
          for (const entry of [response.event.value, ...response.moreEntries]) {
            this.entries.push(entry);
            this.onEntry?.(entry);
          }
        }
        this.notify();
      }
    } catch (error) {
      this.error = LedgerlineError.from(error);
    } finally {
      this.ended = true;
      this.notify();
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  send(command: Request['command']): void {
    this.queue.push({ command });
    this.wakeWriter?.();
    this.wakeWriter = undefined;
  }

  flow(permits: number): void {
    this.send({ case: 'flow', value: { permits } });
  }

  ack(entries: readonly Entry[], requestId = 0n): void {
    this.send({ case: 'ack', value: { positions: entries.map((e) => e.position!), requestId } });
  }

  /** Ends the stream from the client side (the consumer leaves). */
  close(): void {
    this.closed = true;
    this.wakeWriter?.();
  }

  /** Resolves once `condition` holds; fails the test after a bounded wait. */
  until(condition: () => boolean, what: string): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(`timed out waiting for ${what}; got ${this.entries.length} entries, error ${this.error?.reason}`),
        );
      }, WAIT_MS);
      this.listeners.add(check);
    });
  }

  /** Payloads received, as text. */
  texts(): string[] {
    return this.entries.flatMap((e) => e.messages.map((m) => Buffer.from(m.payload).toString()));
  }
}
