import { serve, serviceChannel, serviceConfigSchema, type RunningService } from '@ledgerline/service-kit';
import { z } from 'zod';
import { kafkaGatewaySettings } from './settings.js';
import { startKafkaGateway, type RunningKafkaGateway } from './start-gateway.js';

/** The cluster gateway: the metadata service's address and the gateway's own settings (gRPC serves health only). */
export const kafkaGatewayClusterConfigSchema = serviceConfigSchema.extend({
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: z.string().min(1).default('localhost:6651'),
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
 * (clients reconnect elsewhere) after the gRPC server.
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
    const gateway = await startKafkaGateway({
      settings: config,
      metadataAddress: config.metadataAddress,
      channelSettings: channel.settings,
      logger: service.logger,
    });
    service.addCloser({ name: 'kafka-listener', close: () => gateway.close() });
    return { service, gateway };
  } catch (error) {
    await service.shutdown('the Kafka listener did not start');
    throw error;
  }
}
