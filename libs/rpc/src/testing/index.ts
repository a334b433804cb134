// Test support for @ledgerline/rpc, imported by tests as `@ledgerline/rpc/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './test-server.js';
export * from './test-service.js';
