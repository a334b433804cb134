// Test support for @ledgerline/cursor-codec, imported by tests as `@ledgerline/cursor-codec/testing` and never by
// production code (a lint rule enforces it). Worker scripts a test starts by path are not exported.
export * from './state-arbitraries.js';
