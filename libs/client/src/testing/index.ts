export { FakeCluster, canonicalTopic } from './fake-cluster.js';
export type { FakeClusterOptions } from './fake-cluster.js';
export { FakeTopic } from './fake-topic.js';
export type { StoredEntry } from './fake-topic.js';
export { FakeSubscription } from './fake-subscription.js';
export type { FakeConsumer } from './fake-subscription.js';
export { waitFor, WAIT_FOR_TIMEOUT_MS } from './wait-for.js';
export type { ReceivedAck } from './fake-consume.js';
