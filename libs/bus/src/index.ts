/**
 * @ledgerline/bus: change notifications on NATS-style subjects.
 *
 * Delivery is at most once, by contract, on every backend: a notification may
 * be lost (a slow subscriber's buffer overflowed, NATS was down, the process
 * restarted). Consumers treat notifications as hints to re-read the metadata
 * store or the ledger store and converge without them (periodic re-reads,
 * version checks). Correctness never depends on a notification arriving.
 */
export type { Bus, BusMessage, BusSubscription, BusStats, SubscribeOptions, OverflowPolicy } from './bus.js';
export {
  DEFAULT_SUBSCRIPTION_BUFFER,
  MAX_SUBSCRIPTION_BUFFER,
  MAX_SUBJECT_BYTES,
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_SUBSCRIPTIONS,
} from './bus.js';
export { clusterBusConfig, createBus } from './create-bus.js';
export type { BusConfig } from './create-bus.js';
export { InProcessBus } from './in-process-bus.js';
export type { InProcessBusOptions } from './in-process-bus.js';
export { NatsBus } from './nats-bus.js';
export type { NatsBusOptions } from './nats-bus.js';
export {
  SUBJECT_ROOT,
  METADATA_SUBJECT_PREFIX,
  LEDGER_SUBJECT_PREFIX,
  MANAGED_LEDGER_SUBJECT_PREFIX,
  LEDGERS_DELETABLE_SUBJECT,
  ALL_LEDGERS_LAC_PATTERN,
  ALL_MANAGED_LEDGERS_PATTERN,
  metadataChangedSubject,
  metadataTreePattern,
  metadataChildrenPattern,
  pathOfMetadataSubject,
  ledgerLacSubject,
  managedLedgerSubject,
  encodeSubjectToken,
  decodeSubjectToken,
} from './subjects.js';
export {
  NOTIFICATION_MAGIC,
  NOTIFICATION_FORMAT_VERSION,
  MAX_NOTIFICATION_BYTES,
  MAX_DELETABLE_LEDGERS_PER_NOTIFICATION,
  encodeMetadataChange,
  decodeMetadataChange,
  encodeLacAdvanced,
  decodeLacAdvanced,
  encodeManagedLedgerNotification,
  decodeManagedLedgerNotification,
  encodeLedgersDeletable,
  decodeLedgersDeletable,
} from './notification-codec.js';
export type {
  MetadataChangeNotification,
  LacAdvancedNotification,
  ManagedLedgerNotification,
  LedgersDeletableNotification,
} from './notification-codec.js';

// For other packages and backends: subject syntax and the bounded subscription every backend shares.
export { validateSubject, validateSubjectPattern, subjectMatches } from './subject-syntax.js';
export { BoundedSubscription, resolveSubscribeOptions } from './bounded-subscription.js';
export { BusReason } from './bus-errors.js';
