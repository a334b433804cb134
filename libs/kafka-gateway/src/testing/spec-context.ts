import { createLogger } from '@ledgerline/service-kit';
import { GatewayContext } from '../gateway-context.js';
import type { AdvertisedBroker } from '../gateway-peers.js';
import { GroupCoordinator } from '../group-coordinator.js';
import type { LedgerlineBackend } from '../ledgerline-backend.js';
import { resolveKafkaGatewaySettings, type KafkaGatewaySettings } from '../settings.js';
import { TopicNames } from '../topic-names.js';

/** What a handler spec's gateway differs in; everything else is the same in every spec. */
export interface SpecContextOptions {
  /** The spec's name, for its (silent) logger. */
  name: string;
  settings?: Partial<KafkaGatewaySettings>;
  /** This gateway as a broker: node 1 at localhost:9092 unless given. */
  broker?: () => AdvertisedBroker;
}

/**
 * A gateway context over a backend a spec fakes (only the methods the handler
 * under test calls), in the Kafka namespace public/default, with its own group
 * coordinator and a silent logger.
 */
export function specGatewayContext(backend: object, options: SpecContextOptions): GatewayContext {
  const settings = resolveKafkaGatewaySettings(options.settings ?? {});
  return new GatewayContext(
    settings,
    backend as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    options.broker ?? (() => ({ nodeId: 1, host: 'localhost', port: 9092 })),
    createLogger(options.name, { level: 'silent' }),
  );
}
