// Test support for @ledgerline/kafka-gateway, imported by tests as `@ledgerline/kafka-gateway/testing`
// and never by production code: a bare Kafka connection that sends requests of any version, pipelined or not.
export { RawKafkaClient, plainAuthBytes } from './raw-kafka-client.js';
export type { RawAnswer, RawRequest } from './raw-kafka-client.js';
// The metadata service's index of groups' committed partitions, in memory, as handler specs meet it.
export { MemoryGroupIndexRecords } from './memory-group-index.js';
// A group coordinator on fake timers per test, and the JoinGroup its specs start from.
export { COORDINATOR_SPEC_SETTINGS, coordinatorJoinRequest, coordinatorPerTest } from './coordinator-fixture.js';
// A record batch as a Kafka producer (plain or idempotent) sends it.
export { recordBatchOf } from './record-batches.js';
export type { BatchProducer } from './record-batches.js';
// A Fetch v11 of topic `orders` as the Fetch handler's specs send it.
export { fetchRequest } from './fetch-requests.js';
// The metadata service as a gateway's session and peer list see it, and a gateway's peers over it.
export { FakeGatewayLookup, listedGateway, peersOver } from './fake-gateway-lookup.js';
