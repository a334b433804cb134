// Test support for @ledgerline/metadata-service, imported by tests as `@ledgerline/metadata-service/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './crashing-store.js';
export * from './e2e-suite.js';
export * from './fuzz-requests.js';
export * from './namespace-inspection.js';
export * from './service-fixtures.js';
export * from './spec-support.js';
