// Test support for subscriptions: an in-memory source, a recording sink, a hand-driven clock.
export { InMemorySource } from './in-memory-source.js';
export type { TestEntry } from './in-memory-source.js';
export { RecordingSink } from './recording-sink.js';
export { ManualScheduler } from './manual-scheduler.js';
export { settle } from './settle.js';
