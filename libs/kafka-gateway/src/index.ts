export { startKafkaGateway } from './start-gateway.js';
export type { KafkaGatewayOptions, RunningKafkaGateway } from './start-gateway.js';
export type { GatewayRegistration } from './start-gateway.js';
export { RegisteredPeers, soloPeers, coordinatorAmong, gatewayInstanceId, peerBroker } from './gateway-peers.js';
export type { GatewayPeers, RegisteredPeersOptions } from './gateway-peers.js';
export { kafkaGatewaySettings, resolveKafkaGatewaySettings } from './settings.js';
export { withServiceTlsDefaults, openListenerTls } from './listener-tls.js';
export type { ServiceTlsFiles, ListenerTls } from './listener-tls.js';
export type { TokenCheck } from './gateway-context.js';
export type { KafkaGatewaySettings } from './settings.js';
export { TopicNames, kafkaPartitionCount } from './topic-names.js';
export { GatewayReason } from './reasons.js';
export { COMMITTED_OFFSET_PROPERTY } from './ledgerline-backend.js';
export { HEADERS_PROPERTY, KEY_BASE64_PROPERTY, NULL_VALUE_PROPERTY, TIMESTAMP_PROPERTY } from './record-mapping.js';
export { startClusterKafkaGateway, kafkaGatewayClusterConfigSchema } from './cluster-gateway.js';
export type { KafkaGatewayClusterConfig } from './cluster-gateway.js';

// For other packages: the pieces the gateway is assembled from.
export { GroupCoordinator } from './group-coordinator.js';
export { KafkaGatewayServer, advertisedBroker, derivedNodeId } from './gateway-server.js';
export { MAX_OWNER_CHANNELS, MAX_CACHED_OWNERS } from './owner-router.js';
export type { LocalOwner } from './owner-router.js';
