import { AdminService, LookupService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { freePort, sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { ServiceProcess } from './service-process.js';

export interface WriterCluster {
  readonly metadata: ServiceProcess[];
  readonly writers: ServiceProcess[];
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  /** The Redis and NATS the processes use, and the ledger store's key prefix (other services share it). */
  readonly redisUrl: string;
  readonly natsUrl: string;
  readonly ledgerKeyPrefix: string;
  topicsAt(address: string): Client<typeof TopicsService>;
  /** Starts one more writer owner (after one was stopped). */
  startWriter(name: string, metadataIndex?: number): Promise<ServiceProcess>;
  close(): Promise<void>;
}

/**
 * A cluster as processes: metadata service instances and writer owners, each
 * its own Node process, over the test run's Redis and NATS with key prefixes
 * of their own.
 */
export async function startWriterCluster(options: {
  metadataInstances: number;
  writers: number;
  leaseTtlMs: number;
}): Promise<WriterCluster> {
  const { redisUrl, natsUrl } = sharedServers();
  const prefix = uniqueNamespace('writer-cluster');
  const started: ServiceProcess[] = [];
  const metadata = await Promise.all(
    Array.from({ length: options.metadataInstances }, async (_, i) => {
      const instance = await ServiceProcess.start(`metadata-${i}`, 'metadata', await freePort(), {
        LEDGERLINE_REDIS_URL: redisUrl,
        LEDGERLINE_NATS_URL: natsUrl,
        LEDGERLINE_REDIS_KEY_PREFIX: `${prefix}-meta`,
        LEDGERLINE_METRICS_PORT: '0',
        LEDGERLINE_LOG_LEVEL: 'warn',
        LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '1000',
      });
      started.push(instance);
      return instance;
    }),
  );
  const startWriter = async (name: string, metadataIndex = 0): Promise<ServiceProcess> => {
    const port = await freePort();
    const writer = await ServiceProcess.start(
      name,
      'writer-owner',
      port,
      {
        LEDGERLINE_METADATA_ADDRESS: metadata[metadataIndex % metadata.length]!.address,
        LEDGERLINE_REDIS_URL: redisUrl,
        LEDGERLINE_NATS_URL: natsUrl,
        LEDGERLINE_REDIS_KEY_PREFIX: `${prefix}-ledgers`,
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${port}`,
        LEDGERLINE_INSTANCE_ID: name,
        LEDGERLINE_LEASE_TTL_MS: String(options.leaseTtlMs),
        LEDGERLINE_METRICS_PORT: '0',
        LEDGERLINE_LOG_LEVEL: 'warn',
        LEDGERLINE_DRAIN_TIMEOUT_MS: '10000',
      },
      { readyLine: /writer owner listening/ },
    );
    started.push(writer);
    return writer;
  };
  const writers = await Promise.all(Array.from({ length: options.writers }, (_, i) => startWriter(`writer-${i}`, i)));
  const admin = createClient(AdminService, metadata[0]!.address);
  const lookup = createClient(LookupService, metadata[metadata.length - 1]!.address);
  const topicClients = new Map<string, Client<typeof TopicsService>>();
  return {
    metadata,
    writers,
    admin,
    lookup,
    redisUrl,
    natsUrl,
    ledgerKeyPrefix: `${prefix}-ledgers`,
    topicsAt(address) {
      let client = topicClients.get(address);
      if (client === undefined) {
        client = createClient(TopicsService, address);
        topicClients.set(address, client);
      }
      return client;
    },
    startWriter,
    async close() {
      for (const client of [admin, lookup, ...topicClients.values()]) closeClient(client);
      // Writers first, so their drains still reach the metadata service.
      const processes = [...started].reverse();
      for (const process of processes) await process.stop('SIGTERM');
    },
  };
}
