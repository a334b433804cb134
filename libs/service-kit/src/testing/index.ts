// Test support for @ledgerline/service-kit, imported by tests as `@ledgerline/service-kit/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './reflection-client.js';
export * from './waiting-service.js';
