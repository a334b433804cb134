import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as GrpcClient, credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { AdminService, LookupService, MetadataStoreService } from '@ledgerline/proto';
import { type LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient, ERROR_TRAILER_KEY, type Client } from '@ledgerline/rpc';
import { serviceConfigSchema } from '@ledgerline/service-kit';
import { service as healthService } from 'grpc-health-check';
import type { MaintenanceConfig } from '../config.js';
import { startMetadataService, type RunningMetadataService } from '../metadata-server.js';

/** Test settings of a metadata service on loopback with free ports and no background recounts. */
export function testServiceConfig(overrides: Partial<MaintenanceConfig> = {}) {
  return {
    ...serviceConfigSchema.parse({
      grpcHost: '127.0.0.1',
      grpcPort: 0,
      metricsHost: '127.0.0.1',
      metricsPort: 0,
      logLevel: 'silent',
    }),
    reconcileIntervalMs: 3_600_000,
    recountSettleMs: 30_000,
    ownerSweepIntervalMs: 60_000,
    ...overrides,
  };
}

export interface ServiceClients {
  admin: Client<typeof AdminService>;
  lookup: Client<typeof LookupService>;
  store: Client<typeof MetadataStoreService>;
  close(): void;
}

export function connectClients(address: string): ServiceClients {
  const admin = createClient(AdminService, address);
  const lookup = createClient(LookupService, address);
  const store = createClient(MetadataStoreService, address);
  return {
    admin,
    lookup,
    store,
    close() {
      closeClient(admin);
      closeClient(lookup);
      closeClient(store);
    },
  };
}

export interface StandaloneService {
  address: string;
  running: RunningMetadataService;
  /** The store the service runs over (the wrapped one when `wrapStore` was given). */
  store: MetadataStore;
  close(): Promise<void>;
}

/**
 * The metadata service as standalone mode runs it (SQLite in a temporary
 * directory, in-process bus) on a free loopback port. `wrapStore` lets a test
 * put a fault-injecting store between the service and SQLite.
 */
export async function startStandaloneService(
  options: { wrapStore?: (store: MetadataStore) => MetadataStore; maintenance?: Partial<MaintenanceConfig> } = {},
): Promise<StandaloneService> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-metadata-svc-'));
  const bus = new InProcessBus();
  const sqlite = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'normal' });
  const store = options.wrapStore?.(sqlite) ?? sqlite;
  const running = await startMetadataService({
    store,
    bus,
    config: testServiceConfig(options.maintenance),
    signals: [],
  });
  return {
    address: `127.0.0.1:${running.port}`,
    running,
    store,
    async close() {
      await running.shutdown('test finished');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const HealthClient = makeGenericClientConstructor(healthService, 'Health');
type HealthCheck = (
  request: { service: string },
  options: { deadline: number },
  callback: (error: ServiceError | null, response?: { status: string }) => void,
) => void;

/** A grpc.health.v1 client kept open across many checks. */
export function healthChecker(address: string): { check(): Promise<string>; close(): void } {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as GrpcClient & {
    Check: HealthCheck;
  };
  return {
    check: () =>
      new Promise<string>((resolve, reject) =>
        client.Check({ service: '' }, { deadline: Date.now() + 10_000 }, (error, response) =>
          error === null ? resolve(response!.status) : reject(error),
        ),
      ),
    close: () => client.close(),
  };
}

/** What a refusal of bad input may say. INTERNAL, UNKNOWN and transport codes never are. */
const BAD_INPUT_CODES = new Set([
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'FAILED_PRECONDITION',
  'RESOURCE_EXHAUSTED',
  'ABORTED',
  'PERMISSION_DENIED',
  'OUT_OF_RANGE',
]);

/** A lookup with nobody to answer it is UNAVAILABLE, and says so by this reason. */
const UNAVAILABLE_REASONS = new Set(['NO_LIVE_OWNER']);

function trailerOf(error: ServiceError | undefined): Buffer[] {
  return (error?.metadata?.get(ERROR_TRAILER_KEY) ?? []) as Buffer[];
}

/** Fails unless a call's failure is a refusal with a LedgerlineError reason in its trailer. */
export function expectWellRefused(what: string, error: LedgerlineError): void {
  const summary = `${what} failed with ${error.code} ${error.reason}: ${error.message.slice(0, 300)}`;
  const acceptable =
    BAD_INPUT_CODES.has(error.code) || (error.code === 'UNAVAILABLE' && UNAVAILABLE_REASONS.has(error.reason));
  if (!acceptable) throw new Error(`${summary} (not a refusal of bad input)`);
  if (trailerOf(error.cause as ServiceError).length !== 1) throw new Error(`${summary} (no ErrorInfo trailer)`);
  if (!/^[A-Z][A-Z0-9_]*$/.test(error.reason)) throw new Error(`${summary} (not an UPPER_SNAKE reason)`);
}
