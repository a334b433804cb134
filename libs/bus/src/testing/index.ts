// Test support for @ledgerline/bus, imported by tests as `@ledgerline/bus/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './bus.conformance.js';
