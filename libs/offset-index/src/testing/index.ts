// Test support for @ledgerline/offset-index, imported by tests as `@ledgerline/offset-index/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './test-topic.js';
