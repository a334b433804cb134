import type { Bus } from '@ledgerline/bus';
import type { MetadataStore } from '../store.js';

// A file of its own: the conformance suite imports the suites it runs, and each of them takes a backend too.

export interface ConformanceStoreOptions {
  bus?: Bus;
  maxValueBytes?: number;
  sessionSweepIntervalMs?: number;
}

/** How the suite reaches a backend. Every `open` gives another client over the same data. */
export interface MetadataStoreBackend {
  name: string;
  setup(): Promise<void>;
  open(options?: ConformanceStoreOptions): Promise<MetadataStore>;
  /** Stops a client as a crash would: its sessions are neither renewed nor released. */
  crash(store: MetadataStore): Promise<void>;
  teardown(): Promise<void>;
}
