// Test support for the garbage collector (tests only; never imported by production code).
export { FailingDeletes } from './failing-deletes.js';
export type { BatchFault } from './failing-deletes.js';
export { collectorFixture, TEST_COLLECTOR_CONFIG } from './collector-fixture.js';
export type { CollectorFixture } from './collector-fixture.js';
export { DroppingBus, seededRandom } from './robustness/dropping-bus.js';
