// Test support for @ledgerline/readonly-owner, imported by tests as `@ledgerline/readonly-owner/testing`
// and never by production code: an in-process writer + read-only owners harness.
export { startReadOnlyHarness, READER_GROUP, QUIET_GROUP } from './harness.js';
export type { ReadOnlyHarness, ReadOnlyHarnessOptions } from './harness.js';
