// Test support for @ledgerline/writer-owner, imported by tests as `@ledgerline/writer-owner/testing`
// and never by production code: in-process and multi-process clusters, and clients that route and retry.
export { startWriterHarness, testServiceConfig } from './harness.js';
export type { WriterHarness } from './harness.js';
export { startWriterCluster } from './cluster.js';
export type { WriterCluster } from './cluster.js';
export { ServiceProcess } from './service-process.js';
export { RoutingProducer } from './routing-producer.js';
export { TestConsumer } from './test-consumer.js';
export { noConsumers } from './no-consumers.js';
