import { invalidArgument } from '@ledgerline/errors';
import {
  DEFAULT_SUBSCRIPTION_BUFFER,
  MAX_SUBSCRIPTION_BUFFER,
  type BusMessage,
  type BusSubscription,
  type OverflowPolicy,
  type SubscribeOptions,
} from './bus.js';
import { BusReason } from './bus-errors.js';

export interface ResolvedSubscribeOptions {
  bufferSize: number;
  overflow: OverflowPolicy;
}

/** Checks subscribe options from callers and fills in the defaults. */
export function resolveSubscribeOptions(options: SubscribeOptions = {}): ResolvedSubscribeOptions {
  const bufferSize = options.bufferSize ?? DEFAULT_SUBSCRIPTION_BUFFER;
  if (!Number.isInteger(bufferSize) || bufferSize < 1 || bufferSize > MAX_SUBSCRIPTION_BUFFER) {
    throw invalidArgument(
      BusReason.BAD_BUFFER_SIZE,
      `bufferSize must be an integer from 1 to ${MAX_SUBSCRIPTION_BUFFER}`,
      {
        bufferSize: String(bufferSize),
      },
    );
  }
  const overflow = options.overflow ?? 'drop-oldest';
  if (overflow !== 'drop-oldest' && overflow !== 'drop-newest') {
    throw invalidArgument(BusReason.BAD_OVERFLOW_POLICY, `overflow must be 'drop-oldest' or 'drop-newest'`, {
      overflow: String(overflow),
    });
  }
  return { bufferSize, overflow };
}

/**
 * The consumer side every backend shares: a ring of at most bufferSize
 * messages, one pending reader, and a drop counter. The backend pushes; the
 * consumer iterates. Pushing never blocks the publisher, which is why a slow
 * consumer loses messages rather than slowing everyone down.
 */
export class BoundedSubscription implements BusSubscription {
  private items: (BusMessage | undefined)[];
  private head = 0;
  private size = 0;
  private waiting: ((result: IteratorResult<BusMessage>) => void) | undefined;
  private ended = false;
  private droppedCount = 0;

  constructor(
    readonly pattern: string,
    private readonly options: ResolvedSubscribeOptions,
    private readonly onEnd: (subscription: BoundedSubscription, droppedCount: number) => void,
  ) {
    this.items = new Array<BusMessage | undefined>(Math.min(options.bufferSize, 1024));
  }

  get dropped(): number {
    return this.droppedCount;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Hands a message to the consumer; returns false when it was dropped. */
  push(message: BusMessage): boolean {
    if (this.ended) return false;
    const reader = this.waiting;
    if (reader !== undefined) {
      this.waiting = undefined;
      reader({ value: message, done: false });
      return true;
    }
    if (this.size === this.options.bufferSize) {
      this.droppedCount++;
      if (this.options.overflow === 'drop-newest') return false;
      this.shift();
    }
    this.append(message);
    return true;
  }

  unsubscribe(): void {
    if (this.ended) return;
    this.ended = true;
    this.items.fill(undefined);
    this.size = 0;
    const reader = this.waiting;
    this.waiting = undefined;
    reader?.({ value: undefined, done: true });
    this.onEnd(this, this.droppedCount);
  }

  [Symbol.asyncIterator](): AsyncIterator<BusMessage> {
    return {
      next: () => this.next(),
      return: () => {
        this.unsubscribe();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private next(): Promise<IteratorResult<BusMessage>> {
    if (this.size > 0) return Promise.resolve({ value: this.shift(), done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiting !== undefined) {
      return Promise.reject(new Error('a bus subscription supports one reader at a time'));
    }
    return new Promise((resolve) => (this.waiting = resolve));
  }

  private append(message: BusMessage): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) % this.items.length] = message;
    this.size++;
  }

  private shift(): BusMessage {
    const message = this.items[this.head];
    if (message === undefined) throw new Error('bus subscription ring is out of step');
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.size--;
    return message;
  }

  // The ring starts small and doubles up to bufferSize, so idle subscriptions with a big bound cost little.
  private grow(): void {
    const capacity = Math.min(this.items.length * 2, this.options.bufferSize);
    const copy = new Array<BusMessage | undefined>(capacity);
    for (let i = 0; i < this.size; i++) copy[i] = this.items[(this.head + i) % this.items.length];
    this.items = copy;
    this.head = 0;
  }
}
