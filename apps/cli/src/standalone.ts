import { mkdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import {
  MetadataAdmin,
  MetadataMaintenance,
  metadataServices,
  standaloneConfigSchema,
  storePolicySource,
} from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import {
  consumeBackend,
  startWriterOwnerService,
  writerSettings,
  type RunningWriterOwner,
} from '@ledgerline/writer-owner';
import {
  resolveReadOnlySettings,
  startReadOnlyOwnerService,
  type RunningReadOnlyOwner,
} from '@ledgerline/readonly-owner';
import {
  kafkaGatewaySettings,
  startKafkaGateway,
  withServiceTlsDefaults,
  type RunningKafkaGateway,
} from '@ledgerline/kafka-gateway';
import { consoleSettings, startConsole, type RunningConsole } from '@ledgerline/console';
import { CursorsService, TopicsService } from '@ledgerline/proto';
import { serviceTokenVerifier } from '@ledgerline/service-kit';
import { z } from 'zod';
import { standaloneCollector } from './standalone-collector.js';
import { ensureStandaloneNamespace } from './standalone-namespace.js';

/**
 * Standalone settings: the metadata service's and the writer owner's on one
 * port, and the read-only owner's (PIP-63) on a second one, since it serves
 * TopicsService too.
 */
export const standaloneServerConfigSchema = standaloneConfigSchema.extend({
  ...writerSettings,
  /**
   * The second and third ports pick a free port unless set, so a second
   * standalone given only another --grpc-port starts beside the first; the
   * start line prints where each landed.
   */
  metricsPort: z.number().int().min(0).max(65_535).default(0),
  /** The read-only owner's gRPC port (0: any free port). */
  readOnlyGrpcPort: z.number().int().min(0).max(65_535).default(0),
  /** The owner group the read-only owner serves: give it to a reader namespace (`namespaces create --owner-group`). */
  readOnlyOwnerGroup: z.string().min(1).max(128).default('readers'),
  /** Serve the Kafka protocol (on kafkaPort, 9092 by default); `--kafka-enabled false` turns it off. */
  kafkaEnabled: z.boolean().default(true),
  ...kafkaGatewaySettings,
  /** Serve the web console (on consolePort, 8080 by default); `--console-enabled false` turns it off. */
  consoleEnabled: z.boolean().default(true),
  ...consoleSettings,
});
export type StandaloneServerConfig = z.output<typeof standaloneServerConfigSchema>;

export interface RunningStandalone {
  readonly dataDir: string;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly admin: MetadataAdmin;
  readonly writer: RunningWriterOwner;
  readonly readOnly: RunningReadOnlyOwner;
  /** The Kafka listener; undefined with kafkaEnabled false. */
  readonly kafka: RunningKafkaGateway | undefined;
  /** The web console; undefined with consoleEnabled false or its port taken. */
  readonly console: RunningConsole | undefined;
  shutdown(reason?: string): Promise<void>;
}

/** What standalone keeps in SQLite and in memory, shared by every service it hosts. */
interface StandaloneStores {
  bus: InProcessBus;
  store: SqliteMetadataStore;
  ledgerStore: SqliteLedgerStore;
  admin: MetadataAdmin;
  maintenance: MetadataMaintenance;
}

function openStores(config: StandaloneServerConfig, dataDir: string): StandaloneStores {
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dataDir, 'metadata.db'), bus });
  const ledgerStore = new SqliteLedgerStore({ path: join(dataDir, 'ledgers.db') });
  const admin: MetadataAdmin = new MetadataAdmin(store, {
    bus,
    recountSettleMs: config.recountSettleMs,
    onCountDrift: (namespace) => maintenance.suspect(namespace),
  });
  const maintenance = new MetadataMaintenance(admin.context, config);
  return { bus, store, ledgerStore, admin, maintenance };
}

async function closeStores(stores: StandaloneStores): Promise<void> {
  await stores.ledgerStore.close().catch(() => undefined);
  await stores.store.close().catch(() => undefined);
  await stores.bus.close().catch(() => undefined);
}

/** Opens the stores with `public/default` in them before any port serves, so no client ever finds it missing. */
async function prepareStores(config: StandaloneServerConfig, dataDir: string): Promise<StandaloneStores> {
  const stores = openStores(config, dataDir);
  try {
    await ensureStandaloneNamespace(stores.admin);
  } catch (error) {
    await closeStores(stores);
    throw error;
  }
  return stores;
}

/**
 * The writer owner with the metadata service and the collector on its port.
 * Its closers stop the read-only owner first (`hosted`, started after it,
 * since it reaches lookup over the writer's port), then the stores.
 */
async function startWriter(
  config: StandaloneServerConfig,
  stores: StandaloneStores,
  gc: ReturnType<typeof standaloneCollector>,
  hosted: { readOnly?: RunningReadOnlyOwner },
  signals: readonly NodeJS.Signals[] | undefined,
): Promise<RunningWriterOwner> {
  const { bus, store, ledgerStore, admin, maintenance } = stores;
  try {
    return await startWriterOwnerService({
      name: 'standalone',
      config,
      settings: config,
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(store),
      bus,
      consumeBackend,
      extraServices: [...metadataServices(admin, store, bus), ...gc.services],
      authorizationPolicies: storePolicySource(admin.context),
      ...(signals === undefined ? {} : { signals }),
      closers: [
        {
          name: 'readonly-owner',
          close: async () => {
            await hosted.readOnly?.shutdown('standalone stopping');
          },
        },
        { name: 'garbage-collector', close: () => gc.stop() },
        { name: 'bus', close: () => bus.close() },
        { name: 'metadata-store', close: () => store.close() },
        { name: 'ledger-store', close: () => ledgerStore.close() },
        { name: 'maintenance', close: () => maintenance.stop() },
      ],
    });
  } catch (error) {
    await closeStores(stores);
    throw error;
  }
}

function startReadOnly(
  config: StandaloneServerConfig,
  stores: StandaloneStores,
  writer: RunningWriterOwner,
): Promise<RunningReadOnlyOwner> {
  return startReadOnlyOwnerService({
    name: 'standalone-readonly',
    config: { ...config, grpcPort: config.readOnlyGrpcPort, metricsPort: 0 },
    settings: resolveReadOnlySettings({ ownerGroup: config.readOnlyOwnerGroup, leaseTtlMs: config.leaseTtlMs }),
    metadataAddress: `localhost:${writer.port}`,
    // Metadata is served on the writer's port: the read-only owner calls it as this process does.
    metadataClientOptions: writer.service.selfClientOptions,
    authorizationPolicies: storePolicySource(stores.admin.context),
    ledgerStore: stores.ledgerStore,
    metadata: new MetadataStoreManagedLedgerMetadata(stores.store),
    bus: stores.bus,
    logger: writer.service.logger,
    signals: [],
  });
}

/**
 * Standalone mode: the metadata service (admin, lookup, metadata store API),
 * a writer owner (produce, consume, cursors, offsets) and the garbage
 * collector in this process, on one gRPC port, and a read-only owner (PIP-63,
 * group `readOnlyOwnerGroup`) on `readOnlyGrpcPort`, with their state in SQLite
 * files under dataDir and one in-process bus. Namespace `public/default`
 * exists from the start, with topic auto-creation on, Kafka listener or not.
 * The writer reaches the lookup API over loopback like any owner; its managed
 * ledgers and the collector use the metadata store directly.
 */
export async function startStandalone(
  config: StandaloneServerConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningStandalone> {
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const stores = await prepareStores(config, dataDir);
  const gc = standaloneCollector({ store: stores.store, ledgerStore: stores.ledgerStore, bus: stores.bus });
  const hosted: { readOnly?: RunningReadOnlyOwner } = {};
  const writer = await startWriter(config, stores, gc, hosted, options.signals);
  stores.maintenance.start(writer.service.logger);
  await gc.start(stores.admin, writer.service.logger);
  let readOnly: RunningReadOnlyOwner;
  try {
    readOnly = await startReadOnly(config, stores, writer);
    hosted.readOnly = readOnly;
  } catch (error) {
    await writer.shutdown('the read-only owner did not start');
    throw error;
  }
  let kafka: RunningKafkaGateway | undefined;
  try {
    kafka = config.kafkaEnabled ? await startStandaloneKafka(config, writer) : undefined;
  } catch (error) {
    await readOnly.shutdown('the Kafka listener did not start');
    await writer.shutdown('the Kafka listener did not start');
    throw error;
  }
  let webConsole: RunningConsole | undefined;
  try {
    webConsole = config.consoleEnabled ? await startStandaloneConsole(config, writer, kafka) : undefined;
  } catch (error) {
    await kafka?.close();
    await readOnly.shutdown('the console did not start');
    await writer.shutdown('the console did not start');
    throw error;
  }
  return {
    dataDir,
    grpcPort: writer.port,
    metricsPort: writer.service.metricsPort,
    admin: stores.admin,
    writer,
    readOnly,
    kafka,
    console: webConsole,
    async shutdown(reason) {
      // Browsers first, then Kafka clients: both reach the owners over this process's ports.
      await webConsole?.close();
      await kafka?.close();
      // The read-only owner first: its last acks go to the writer owner, which must still be there.
      await readOnly.shutdown(reason);
      await writer.shutdown(reason);
    },
  };
}

/**
 * The Kafka gateway, reaching lookup, admin and the owners over the writer's
 * port as a cluster gateway would. A Kafka port already taken (a local Kafka,
 * a second standalone) leaves the rest of standalone running: the start line
 * and the log say the Kafka listener is off. The listener serves TLS with
 * standalone's certificate unless given its own, and requires SASL logins
 * when authEnabled, as the cluster gateway does.
 */
async function startStandaloneKafka(
  config: StandaloneServerConfig,
  writer: RunningWriterOwner,
): Promise<RunningKafkaGateway | undefined> {
  let kafka: RunningKafkaGateway;
  const tokenVerifier = await serviceTokenVerifier(config);
  try {
    kafka = await startKafkaGateway({
      settings: withServiceTlsDefaults(config),
      metadataAddress: `localhost:${writer.port}`,
      channelSettings: writer.service.channelSettings,
      logger: writer.service.logger,
      tlsReloadIntervalMs: config.tlsReloadIntervalMs,
      ...(tokenVerifier === undefined ? {} : { tokenVerifier }),
      localOwner: {
        address: writer.owner.identity.advertisedAddress,
        topics: writer.service.grpc.inProcessClient(TopicsService),
        cursors: writer.service.grpc.inProcessClient(CursorsService),
      },
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    writer.service.logger.warn({ kafkaPort: config.kafkaPort }, 'the Kafka port is taken: the Kafka listener is off');
    return undefined;
  }
  // A signal-started shutdown closes the listener too (shutdown() closes it first).
  writer.service.addCloser({ name: 'kafka-gateway', close: () => kafka.close() });
  return kafka;
}

/**
 * The web console, calling the services over this process's gRPC port as the
 * console app calls a cluster's (so every call goes through the same checks),
 * and the Kafka listener when it runs. A console port already taken leaves the
 * rest of standalone running, as a taken Kafka port does.
 */
async function startStandaloneConsole(
  config: StandaloneServerConfig,
  writer: RunningWriterOwner,
  kafka: RunningKafkaGateway | undefined,
): Promise<RunningConsole | undefined> {
  const local = `localhost:${writer.port}`;
  let running: RunningConsole;
  try {
    running = await startConsole({
      config,
      mode: 'standalone',
      logger: writer.service.logger,
      backends: {
        metadataAddress: local,
        collectorAddress: local,
        ...(kafka === undefined ? {} : { kafkaAddress: `localhost:${kafka.port}` }),
      },
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    writer.service.logger.warn({ consolePort: config.consolePort }, 'the console port is taken: the console is off');
    return undefined;
  }
  // A signal-started shutdown closes the console too (shutdown() closes it first).
  writer.service.addCloser({ name: 'console', close: () => running.close() });
  return running;
}
