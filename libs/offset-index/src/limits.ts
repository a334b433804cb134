/**
 * Every bound this package enforces, in one place, with its unit.
 * Values from outside beyond these limits are refused with INVALID_ARGUMENT
 * (or RESOURCE_EXHAUSTED for capacity), never silently clipped.
 */

/** The two bytes that open an entry carrying broker entry metadata (Pulsar's 0x0e02). */
export const BROKER_ENTRY_METADATA_MAGIC = 0x0e02;

/** Magic (2 bytes) plus the big-endian metadata size (4 bytes). */
export const ENTRY_HEADER_BYTES = 6;

/**
 * The largest BrokerEntryMetadata we accept. Our own metadata is at most 22
 * bytes (two tagged uint64 varints); the rest leaves room for fields a newer
 * writer may add, while a corrupt size field cannot make us look far past it.
 */
export const MAX_BROKER_ENTRY_METADATA_BYTES = 256;

/** Offsets and broker timestamps are JavaScript safe integers (2^53 - 1). */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

/** Default and largest number of appended entries awaiting the store's acknowledgement. */
export const DEFAULT_MAX_PENDING_ENTRIES = 10_000;
export const MAX_PENDING_ENTRIES_LIMIT = 1_000_000;

/** Default and largest number of attempts to append one entry before the assigner asks for recovery. */
export const DEFAULT_MAX_APPEND_ATTEMPTS = 5;
export const MAX_APPEND_ATTEMPTS_LIMIT = 100;

/** Default sparse index spacing: a point every 64 entries or every 64 KiB of entries, whichever comes first. */
export const DEFAULT_ENTRIES_PER_POINT = 64;
export const DEFAULT_BYTES_PER_POINT = 64 * 1024;

/**
 * The widest spacing allowed: one range read fetches at most this many
 * entries, which matches the ledger store's default read limit.
 */
export const MAX_ENTRIES_PER_POINT = 10_000;
export const MAX_BYTES_PER_POINT = 64 * 1024 * 1024;

/** The most points one ledger index may hold (a ledger rolls long before this). */
export const MAX_INDEX_POINTS = 1 << 20;

/** The largest serialized ledger index we decode, in bytes. */
export const MAX_SERIALIZED_INDEX_BYTES = 64 * 1024 * 1024;

/**
 * Default and largest number of entries a lookup reads at once when a ledger
 * has no index. The default is also the ledger store's read limit (ledger-store
 * uses this constant), so one lookup page is always one store read.
 */
export const DEFAULT_MAX_READ_ENTRIES = 10_000;
export const MAX_READ_ENTRIES_LIMIT = 100_000;
