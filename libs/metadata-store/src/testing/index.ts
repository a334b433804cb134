// Test support for @ledgerline/metadata-store, imported by tests as `@ledgerline/metadata-store/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './cas-history.js';
export * from './cas-linearizability.conformance.js';
export * from './documented-limits.conformance.js';
export * from './metadata-store-backend.js';
export * from './metadata-store.conformance.js';
export * from './redis-conformance-support.js';
export * from './redis-drops.js';
export * from './session-expiry.conformance.js';
export * from './store-model.conformance.js';
