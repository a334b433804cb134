export { startKafkaGateway } from './start-gateway.js';
export type { KafkaGatewayOptions, RunningKafkaGateway } from './start-gateway.js';
export { kafkaGatewaySettings, resolveKafkaGatewaySettings } from './settings.js';
export type { KafkaGatewaySettings } from './settings.js';
export { TopicNames, kafkaPartitionCount } from './topic-names.js';
export { GatewayReason } from './reasons.js';
export { COMMITTED_OFFSET_PROPERTY } from './ledgerline-backend.js';
export { KEY_BASE64_PROPERTY } from './record-mapping.js';
export { startClusterKafkaGateway, kafkaGatewayClusterConfigSchema } from './cluster-gateway.js';
export type { KafkaGatewayClusterConfig } from './cluster-gateway.js';

// For other packages: the pieces the gateway is assembled from.
export { GroupCoordinator } from './group-coordinator.js';
export { KafkaGatewayServer, advertisedBroker } from './gateway-server.js';
export { MAX_OWNER_CHANNELS, MAX_CACHED_OWNERS } from './owner-router.js';
