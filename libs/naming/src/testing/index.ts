// Test support for @ledgerline/naming, imported by tests as `@ledgerline/naming/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './naming-expectations.js';
