import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelSettings } from '@ledgerline/rpc';
import type { Logger } from '@ledgerline/service-kit';
import { GatewayContext } from './gateway-context.js';
import { advertisedBroker, KafkaGatewayServer } from './gateway-server.js';
import { GroupCoordinator } from './group-coordinator.js';
import { LedgerlineBackend } from './ledgerline-backend.js';
import { ensureKafkaNamespace } from './kafka-namespace.js';
import { OwnerRouter } from './owner-router.js';
import type { KafkaGatewaySettings } from './settings.js';
import { TopicNames } from './topic-names.js';

/** How long the start waits for the Kafka namespace before it listens anyway. */
const NAMESPACE_WAIT_MS = 5_000;

/** A wait that does not hold the process open. */
const delay = (ms: number): Promise<void> => sleep(ms, undefined, { ref: false });

export interface KafkaGatewayOptions {
  settings: KafkaGatewaySettings;
  /** host:port of the metadata service (lookup and admin). */
  metadataAddress: string;
  /** Channel settings for the metadata service and the owners (TLS, this service's certificate). */
  channelSettings?: ChannelSettings;
  logger: Logger;
}

export interface RunningKafkaGateway {
  /** The port the Kafka listener is bound to. */
  readonly port: number;
  readonly server: KafkaGatewayServer;
  readonly groups: GroupCoordinator;
  close(): Promise<void>;
}

/**
 * Starts the Kafka listener: what the cluster app and standalone both host.
 * With kafkaCreateNamespace, the home tenant and namespace are created when
 * missing (kafka-namespace.ts: in the background, waiting for a metadata
 * service still starting; a refusal is logged, not fatal: an admin may have
 * restricted it; a namespace that exists keeps its policies).
 */
export async function startKafkaGateway(options: KafkaGatewayOptions): Promise<RunningKafkaGateway> {
  const { settings, logger } = options;
  const router = new OwnerRouter(
    options.metadataAddress,
    options.channelSettings ?? {},
    settings.kafkaBackendTimeoutMs,
  );
  const backend = new LedgerlineBackend(router);
  const groups = new GroupCoordinator(settings);
  const names = new TopicNames({ tenant: settings.kafkaTenant, namespace: settings.kafkaNamespace });
  let broker = advertisedBroker(
    settings.kafkaNodeId,
    settings.kafkaAdvertisedAddress,
    settings.kafkaHost,
    settings.kafkaPort,
  );
  const context = new GatewayContext(settings, backend, names, groups, () => broker, logger);
  // Waited for a moment, so clients that connect at once find it; past that it goes on in the background
  // (a metadata service still starting) while the listener serves.
  const stopEnsuring = new AbortController();
  const ensured = settings.kafkaCreateNamespace
    ? ensureKafkaNamespace(backend, settings, logger, stopEnsuring.signal)
    : Promise.resolve(false);
  await Promise.race([ensured, delay(NAMESPACE_WAIT_MS)]);
  const server = new KafkaGatewayServer(context);
  let port: number;
  try {
    port = await server.listen(settings.kafkaHost, settings.kafkaPort);
  } catch (error) {
    stopEnsuring.abort();
    router.close();
    throw error;
  }
  broker = advertisedBroker(settings.kafkaNodeId, settings.kafkaAdvertisedAddress, settings.kafkaHost, port);
  logger.info(
    { port, namespace: names.namespace, advertised: `${broker.host}:${broker.port}` },
    'kafka gateway listening',
  );
  return {
    port,
    server,
    groups,
    async close() {
      stopEnsuring.abort();
      groups.close();
      await server.close();
      router.close();
    },
  };
}
