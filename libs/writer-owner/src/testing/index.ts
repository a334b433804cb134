// Test support for @ledgerline/writer-owner, imported by tests as `@ledgerline/writer-owner/testing`
// and never by production code: an in-process cluster, and clients that route and retry. Clusters of
// processes are @ledgerline/cluster's (driven by @ledgerline/cluster-harness); the Consume test client is @ledgerline/ownership/testing's.
export { QUICK_TRIM_SETTINGS, startWriterHarness } from './harness.js';
export type { WriterHarness } from './harness.js';
export { RoutingProducer } from './routing-producer.js';
export { noConsumers } from './no-consumers.js';
export { openTestTopic } from './test-topic.js';
