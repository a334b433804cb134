import type { StorageErrorOptions } from '@ledgerline/storage-kit';
import type { Bus } from '@ledgerline/bus';

/**
 * The metadata store: a tree of versioned binary values addressed by
 * absolute `/`-separated paths, in the spirit of ZooKeeper and Pulsar's
 * MetadataStore. It is the single source of truth; every write that depends
 * on a read is a compare-and-set on the version that was read.
 *
 * Paths: absolute, `/`-separated, no empty segment, no trailing slash, no `.`
 * or `..` segment, no control character or unpaired surrogate, at most
 * MAX_PATH_BYTES UTF-8 bytes; anything else is INVALID_ARGUMENT / BAD_PATH
 * (PATH_TOO_LONG). The root `/` can be read and listed but not written
 * (INVALID_ARGUMENT / PATH_IS_ROOT). Values: at most the backend's
 * `maxValueBytes` (default DEFAULT_MAX_VALUE_BYTES); a larger value is
 * RESOURCE_EXHAUSTED / VALUE_TOO_LARGE.
 *
 * A store that cannot be reached fails fast with UNAVAILABLE /
 * STORE_UNAVAILABLE. Such a failure of a write is ambiguous (it may have been
 * applied): re-read before retrying a compare-and-set.
 *
 * A node is listed by `children(parent)` of its immediate parent only; parents
 * are not created implicitly and a node may exist without its parent.
 */
export interface MetadataStore {
  get(path: string): Promise<VersionedValue | undefined>;
  exists(path: string): Promise<boolean>;
  /**
   * Writes a value and returns its new version (1 for a new node, +1 per
   * change). expectedVersion: a number (the version read; ABORTED / BAD_VERSION
   * if it changed or the node is gone), 'absent' (create only; ABORTED /
   * BAD_VERSION if it exists), or omitted (unconditional).
   */
  put(path: string, value: Uint8Array, options?: PutOptions): Promise<number>;
  /**
   * Deletes a node. With expectedVersion, ABORTED / BAD_VERSION if it changed.
   * Deleting a missing node without expectedVersion is a no-op.
   */
  delete(path: string, options?: DeleteOptions): Promise<void>;
  /** Child names in ascending byte order, paged: pass `next` back as `after`. */
  children(path: string, options?: ChildrenOptions): Promise<ChildrenPage>;
  /**
   * A session kept alive by the store client; ephemeral nodes written with it
   * vanish when it closes or when it is not kept alive for ttlMs.
   * ttlMs: MIN_SESSION_TTL_MS to MAX_SESSION_TTL_MS, else INVALID_ARGUMENT.
   */
  openSession(options: SessionOptions): Promise<MetadataSession>;
  /** Unique, strictly increasing ids per named sequence, starting at 1. */
  nextId(sequence: string): Promise<number>;
  /**
   * Closes the sessions this store opened (their ephemeral nodes go) and the
   * connection; later calls fail with FAILED_PRECONDITION / STORE_CLOSED.
   */
  close(): Promise<void>;
}

export interface SessionOptions {
  ttlMs: number;
}

/** A stored value with the version a compare-and-set must name to replace it. */
export interface Versioned<T> {
  value: T;
  version: number;
}

export interface VersionedValue extends Versioned<Uint8Array> {
  createdAtMs: number;
  modifiedAtMs: number;
  /** The session id when the node is ephemeral. */
  ephemeralSessionId?: string;
}

/** 'absent' creates only; a number replaces exactly that version. */
export type ExpectedVersion = number | 'absent';

export interface PutOptions {
  expectedVersion?: ExpectedVersion;
  /**
   * Makes the node ephemeral: it lives as long as the session. Each put sets
   * the owner anew: a put without a session makes the node persistent, a put
   * with another session hands it over. The session must come from this store
   * (INVALID_ARGUMENT / FOREIGN_SESSION) and be live (FAILED_PRECONDITION /
   * SESSION_EXPIRED).
   */
  session?: MetadataSession;
}

export interface DeleteOptions {
  expectedVersion?: number;
}

export interface ChildrenOptions {
  /** Return names strictly after this one (the previous page's `next`). */
  after?: string;
  /** Page size, 1 to MAX_CHILDREN_PAGE; default DEFAULT_CHILDREN_PAGE. */
  limit?: number;
}

export interface ChildrenPage {
  names: string[];
  /** Set when more names may follow. */
  next?: string;
}

export interface MetadataSession {
  readonly id: string;
  readonly ttlMs: number;
  /** True once the session is closed or has expired. */
  readonly expired: boolean;
  /**
   * How many times the store has extended the session's life. Lets an owner (or a test)
   * see a session outlive its TTL by renewal rather than by how much time went by.
   */
  readonly renewals: number;
  /** Called once when the store finds the session expired (not on close). */
  onExpired(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * The change notification published on the bus for every successful write,
 * and for ephemeral nodes removed because their session ended. It is a hint:
 * delivery is at most once, so watchers re-read and compare versions.
 */
export interface MetadataChange {
  path: string;
  kind: 'created' | 'modified' | 'deleted';
  /** The new version; 0 for a deletion. */
  version: number;
}

/** Options every backend takes; `logger` and `registry` receive errors no call hears (see StorageErrorOptions). */
export interface MetadataStoreOptions extends StorageErrorOptions {
  /** Where change notifications go (subjects from @ledgerline/bus metadataChangedSubject). */
  bus?: Bus;
  /** Largest value accepted, 1 to MAX_VALUE_BYTES; default DEFAULT_MAX_VALUE_BYTES. */
  maxValueBytes?: number;
  /** How often the store looks for sessions that expired (their owner died); default DEFAULT_SESSION_SWEEP_INTERVAL_MS. */
  sessionSweepIntervalMs?: number;
}

export const MAX_PATH_BYTES = 1024;
export const DEFAULT_MAX_VALUE_BYTES = 4 * 1024 * 1024;
/** The ceiling for maxValueBytes. */
export const MAX_VALUE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CHILDREN_PAGE = 1000;
export const MAX_CHILDREN_PAGE = 10_000;
export const MAX_SEQUENCE_NAME_BYTES = 256;
export const MIN_SESSION_TTL_MS = 250;
export const MAX_SESSION_TTL_MS = 10 * 60 * 1000;
/** Sessions one store client may hold open at once. */
export const MAX_OPEN_SESSIONS = 10_000;
export const DEFAULT_SESSION_SWEEP_INTERVAL_MS = 1000;
