// Test support of the read-only owner, for its specs and never for production code: a metadata
// service and a writer owner in process (SQLite, in-process bus), for read-only owners to serve from.
export { QUIET_GROUP, READER_GROUP, startReadOnlyHarness } from './readonly-harness.js';
export type { ReadOnlyHarness, ReadOnlyHarnessOptions } from './readonly-harness.js';
