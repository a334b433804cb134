import type { ChannelSettings } from '@ledgerline/rpc';
import type { Logger } from '@ledgerline/service-kit';
import { GatewayContext } from './gateway-context.js';
import { advertisedBroker, KafkaGatewayServer } from './gateway-server.js';
import { GroupCoordinator } from './group-coordinator.js';
import { LedgerlineBackend } from './ledgerline-backend.js';
import { ANONYMOUS, OwnerRouter } from './owner-router.js';
import type { KafkaGatewaySettings } from './settings.js';
import { TopicNames } from './topic-names.js';

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
 * With kafkaCreateNamespace, the home tenant and namespace are created first
 * when missing, the namespace with allowAutoTopicCreation as kafkaAutoCreateTopics
 * says (a failure to do so is logged, not fatal: an admin may have restricted
 * it; a namespace that exists keeps its policies).
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
  if (settings.kafkaCreateNamespace) {
    // Kafka's own topics live here, so it allows auto-creation as the gateway does (auto.create.topics.enable).
    const policies = { allowAutoTopicCreation: settings.kafkaAutoCreateTopics };
    await backend
      .ensureNamespace(settings.kafkaTenant, settings.kafkaNamespace, policies, ANONYMOUS)
      .catch((error: unknown) => {
        logger.warn({ err: error, namespace: names.namespace }, 'the Kafka namespace could not be created');
      });
  }
  const server = new KafkaGatewayServer(context);
  let port: number;
  try {
    port = await server.listen(settings.kafkaHost, settings.kafkaPort);
  } catch (error) {
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
      groups.close();
      await server.close();
      router.close();
    },
  };
}
