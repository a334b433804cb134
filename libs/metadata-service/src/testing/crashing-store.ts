import type {
  ChildrenOptions,
  ChildrenPage,
  DeleteOptions,
  MetadataSession,
  MetadataStore,
  PutOptions,
  SessionOptions,
  VersionedValue,
} from '@ledgerline/metadata-store';
import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * A MetadataStore that stands for a process that dies: the first
 * `writesBeforeCrash` writes (put, delete, nextId) go through, and from then
 * on every call fails as if the process were gone. With `lastWriteLands`, the
 * write that crashes is applied before the failure (the ambiguous case: the
 * store has it, the caller never learns). The store underneath is left open,
 * so a test can "restart" the service over it.
 */
export class CrashingStore implements MetadataStore {
  readonly #inner: MetadataStore;
  readonly #writesBeforeCrash: number;
  readonly #lastWriteLands: boolean;
  #writes = 0;
  #crashed = false;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(inner: MetadataStore, writesBeforeCrash: number, options: { lastWriteLands?: boolean } = {}) {
    this.#inner = inner;
    this.#writesBeforeCrash = writesBeforeCrash;
    this.#lastWriteLands = options.lastWriteLands ?? false;
  }

  get crashed(): boolean {
    return this.#crashed;
  }

  /** Writes attempted so far, the crashing one included. */
  get writes(): number {
    return this.#writes;
  }

  #dead(): LedgerlineError {
    return new LedgerlineError('UNAVAILABLE', MetadataServiceReason.PROCESS_CRASHED, 'the process crashed (simulated)');
  }

  async #read<T>(call: () => Promise<T>): Promise<T> {
    if (this.#crashed) throw this.#dead();
    return call();
  }

  async #write<T>(call: () => Promise<T>): Promise<T> {
    if (this.#crashed) throw this.#dead();
    this.#writes++;
    if (this.#writes <= this.#writesBeforeCrash) return this.#track(call());
    this.#crashed = true;
    if (this.#lastWriteLands) await this.#track(call()).catch(() => undefined);
    throw this.#dead();
  }

  #track<T>(write: Promise<T>): Promise<T> {
    this.#inFlight.add(write);
    const forget = () => this.#inFlight.delete(write);
    write.then(forget, forget);
    return write;
  }

  /**
   * Waits for the writes the process had in flight when it died: they still
   * land, as they would on a real store, and a test "restarts" after them
   * (the service's settle time stands for this wait).
   */
  async drained(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  get(path: string): Promise<VersionedValue | undefined> {
    return this.#read(() => this.#inner.get(path));
  }

  exists(path: string): Promise<boolean> {
    return this.#read(() => this.#inner.exists(path));
  }

  children(path: string, options?: ChildrenOptions): Promise<ChildrenPage> {
    return this.#read(() => this.#inner.children(path, options));
  }

  put(path: string, value: Uint8Array, options?: PutOptions): Promise<number> {
    return this.#write(() => this.#inner.put(path, value, options));
  }

  delete(path: string, options?: DeleteOptions): Promise<void> {
    return this.#write(() => this.#inner.delete(path, options));
  }

  nextId(sequence: string): Promise<number> {
    return this.#write(() => this.#inner.nextId(sequence));
  }

  openSession(options: SessionOptions): Promise<MetadataSession> {
    return this.#read(() => this.#inner.openSession(options));
  }

  /** The process is gone; the store underneath belongs to the test. */
  async close(): Promise<void> {
    this.#crashed = true;
  }
}

/**
 * A store that holds back the first write to one path until the test opens
 * it. Stands for a process
 * that stalls at that point.
 */
export class WriteGate extends CrashingStore {
  readonly #path: string;
  #armed = true;
  #open!: () => void;
  #arrived!: () => void;
  readonly reached = new Promise<void>((resolve) => (this.#arrived = resolve));
  readonly #opened = new Promise<void>((resolve) => (this.#open = resolve));

  constructor(inner: MetadataStore, path: string) {
    super(inner, Number.MAX_SAFE_INTEGER);
    this.#path = path;
  }

  open(): void {
    this.#open();
  }

  override async put(path: string, value: Uint8Array, options?: PutOptions) {
    if (this.#armed && path === this.#path) {
      this.#armed = false;
      this.#arrived();
      await this.#opened;
    }
    return super.put(path, value, options);
  }
}
