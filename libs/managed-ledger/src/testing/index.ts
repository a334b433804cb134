// Test support for @ledgerline/managed-ledger, imported by tests as `@ledgerline/managed-ledger/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './fault-injecting-ledger-store.js';
export * from './fault-injecting-metadata.js';
export * from './fixtures.js';
export * from './in-memory-ledger-store.js';
export * from './in-memory-metadata-store.js';
export * from './simulated-process.js';
export * from './robustness/append-history.js';
export * from './robustness/append-recorder.js';
export * from './robustness/backend.js';
export * from './robustness/cursor-history.js';
export * from './robustness/cursor-model.js';
export * from './robustness/deferred.js';
export * from './robustness/history-consumer.js';
export * from './robustness/log-invariants.js';
export * from './robustness/owners.js';
export * from './robustness/random.js';
export * from './robustness/report.js';
export * from './robustness/trimming-history.js';
export * from './robustness/waiting.js';
