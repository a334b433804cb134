// Test support for @ledgerline/ownership, imported by tests as `@ledgerline/ownership/testing` and never
// by production code: what tests of either kind of owner use, a hand-driven Consume stream and the
// loopback service config their in-process services run with.
export { TestConsumer } from './test-consumer.js';
export { ownersMetadataConfig, testServiceConfig } from './service-config.js';
export { consumeCallContext } from './consume-call-context.js';
export { consumeResponseOf, reflectedEntry } from './consume-responses.js';
