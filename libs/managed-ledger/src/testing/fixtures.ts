import type { LedgerStore } from '@ledgerline/ledger-store';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { Registry } from 'prom-client';
import type { ManagedLedgerDependencies, ManagedLedgerLogger } from '../context.js';
import { MetadataStoreManagedLedgerMetadata } from '../metadata/metadata-store-managed-ledger-metadata.js';
import { InMemoryLedgerStore } from './in-memory-ledger-store.js';
import { InMemoryMetadataStore } from './in-memory-metadata-store.js';

/** A clock tests move by hand, so rollover by age and retention are deterministic. */
export class ManualClock {
  constructor(public nowMs = 1_700_000_000_000) {}
  now = (): number => this.nowMs;
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

/** A logger that keeps what it was told, for assertions. */
export class RecordingLogger implements ManagedLedgerLogger {
  readonly lines: { level: string; message: string; details: object }[] = [];
  info(details: object, message: string): void {
    this.lines.push({ level: 'info', message, details });
  }
  warn(details: object, message: string): void {
    this.lines.push({ level: 'warn', message, details });
  }
  error(details: object, message: string): void {
    this.lines.push({ level: 'error', message, details });
  }
}

export interface TestBackends {
  ledgerStore: LedgerStore;
  metadataStore: MetadataStore;
  clock: ManualClock;
  logger: RecordingLogger;
  registry: Registry;
  deps(): ManagedLedgerDependencies;
}

/** Dependencies over the given stores (in-memory fakes when omitted). */
export function testBackends(stores: { ledgerStore?: LedgerStore; metadataStore?: MetadataStore } = {}): TestBackends {
  const ledgerStore = stores.ledgerStore ?? new InMemoryLedgerStore();
  const metadataStore = stores.metadataStore ?? new InMemoryMetadataStore();
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  const registry = new Registry();
  return {
    ledgerStore,
    metadataStore,
    clock,
    logger,
    registry,
    deps: () => ({
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(metadataStore),
      clock: clock.now,
      logger,
      metricsRegistry: registry,
    }),
  };
}

export function payloadOf(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function textOf(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
