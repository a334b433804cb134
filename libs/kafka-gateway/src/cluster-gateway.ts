import {
  serve,
  serviceChannel,
  serviceConfigSchema,
  serviceTokenVerifier,
  type RunningService,
} from '@ledgerline/service-kit';
import { z } from 'zod';
import { withServiceTlsDefaults } from './listener-tls.js';
import { kafkaGatewaySettings } from './settings.js';
import { startKafkaGateway, type RunningKafkaGateway } from './start-gateway.js';

/** What the listener's close may take after the leave's wait (the service's default for a closer). */
const CLOSE_AFTER_LEAVE_MS = 5_000;

/** The cluster gateway: the metadata service's address and the gateway's own settings (gRPC serves health only). */
export const kafkaGatewayClusterConfigSchema = serviceConfigSchema.extend({
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: z.string().min(1).default('localhost:6651'),
  /** The owner group gateways register in to find each other (group coordinators; the brokers Metadata names). */
  kafkaGatewayGroup: z.string().min(1).max(128).default('kafka-gateways'),
  /** How long a gateway that died keeps coordinating its consumer groups (its session's TTL). */
  kafkaGatewaySessionTtlMs: z.number().int().min(1_000).max(300_000).default(10_000),
  /** How often each gateway lists the live gateways. */
  kafkaGatewayRefreshMs: z.number().int().min(100).max(60_000).default(1_000),
  /**
   * On SIGTERM, how long the gateway keeps answering once it has sent its clients to the other gateways (Metadata
   * names them; Produce and Fetch answer NOT_LEADER_OR_FOLLOWER, group requests NOT_COORDINATOR), so every member
   * hears it at its next heartbeat (3 s in kafkajs and librdkafka) before the port closes. It ends sooner once no
   * client is connected; 0 closes at once.
   */
  kafkaGatewayLeaveMs: z.number().int().min(0).max(30_000).default(4_000),
  ...kafkaGatewaySettings,
});
export type KafkaGatewayClusterConfig = z.output<typeof kafkaGatewayClusterConfigSchema>;

export interface RunningClusterKafkaGateway {
  readonly service: RunningService;
  readonly gateway: RunningKafkaGateway;
}

/**
 * The gateway as its own process: gRPC health, reflection and metrics as
 * every service has, and the Kafka listener. Shutdown closes the listener
 * (clients reconnect elsewhere) after the gRPC server. The Kafka listener's
 * TLS files default to the service's (tlsCert, tlsKey, tlsCa), and with
 * authEnabled Kafka clients must log in with SASL/PLAIN `token:<jwt>`.
 */
export async function startClusterKafkaGateway(
  config: KafkaGatewayClusterConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningClusterKafkaGateway> {
  const channel = serviceChannel(config);
  const service = await serve({
    name: 'kafka-gateway',
    config,
    services: [],
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    closers: [{ name: 'tls-files', close: () => channel.close() }],
  });
  try {
    const tokenVerifier = await serviceTokenVerifier(config);
    const gateway = await startKafkaGateway({
      settings: withServiceTlsDefaults(config),
      metadataAddress: config.metadataAddress,
      channelSettings: channel.settings,
      logger: service.logger,
      tlsReloadIntervalMs: config.tlsReloadIntervalMs,
      registration: {
        group: config.kafkaGatewayGroup,
        ttlMs: config.kafkaGatewaySessionTtlMs,
        refreshMs: config.kafkaGatewayRefreshMs,
        leaveMs: config.kafkaGatewayLeaveMs,
      },
      ...(tokenVerifier === undefined ? {} : { tokenVerifier }),
    });
    service.addCloser({
      name: 'kafka-listener',
      close: () => gateway.close(),
      // The leave's wait comes before the listener's own close.
      timeoutMs: config.kafkaGatewayLeaveMs + CLOSE_AFTER_LEAVE_MS,
    });
    return { service, gateway };
  } catch (error) {
    await service.shutdown('the Kafka listener did not start');
    throw error;
  }
}
