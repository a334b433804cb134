// Test support for @ledgerline/ledger-store, imported by tests as `@ledgerline/ledger-store/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './conformance-support.js';
export * from './connection-drops.js';
export * from './fencing-history.js';
export * from './ledger-store-batches.conformance.js';
export * from './ledger-store-edges.conformance.js';
export * from './ledger-store.conformance.js';
