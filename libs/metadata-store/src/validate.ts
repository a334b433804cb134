import { invalidArgument, LedgerlineError, ErrorReason } from '@ledgerline/errors';
import {
  DEFAULT_CHILDREN_PAGE,
  DEFAULT_MAX_VALUE_BYTES,
  MAX_VALUE_BYTES,
  MAX_CHILDREN_PAGE,
  MAX_PATH_BYTES,
  MAX_SEQUENCE_NAME_BYTES,
  MAX_SESSION_TTL_MS,
  MIN_SESSION_TTL_MS,
  type ChildrenOptions,
  type ExpectedVersion,
} from './store.js';
import { MetadataStoreReason } from './metadata-errors.js';

// C0 controls and DEL: invisible in logs and troublesome in keys and subjects.
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit === 0x7f) return true;
  }
  return false;
}
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// A surrogate half without its partner cannot be written as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A valid path split at its last `/`: the root's children have parent `/`. */
export interface PathParts {
  path: string;
  parent: string;
  name: string;
}

/**
 * Checks a metadata path (see MetadataStore for the rules) and throws
 * INVALID_ARGUMENT with reason BAD_PATH or PATH_TOO_LONG when it breaks one.
 */
export function validatePath(path: string): void {
  if (typeof path !== 'string') throw invalidArgument(MetadataStoreReason.BAD_PATH, 'a path must be a string');
  if (!path.startsWith('/')) throw badPath(path, 'it must start with /');
  // Most paths are printable ASCII: one cheap test replaces the byte count, control and surrogate checks.
  const ascii = PRINTABLE_ASCII.test(path);
  if ((ascii ? path.length : Buffer.byteLength(path, 'utf8')) > MAX_PATH_BYTES) {
    throw invalidArgument(MetadataStoreReason.PATH_TOO_LONG, `the path is longer than ${MAX_PATH_BYTES} UTF-8 bytes`, {
      prefix: path.slice(0, 100),
    });
  }
  if (!ascii && hasControlCharacter(path)) throw badPath(path, 'it holds a control character');
  if (!ascii && LONE_SURROGATE.test(path)) throw badPath(path, 'it holds an unpaired UTF-16 surrogate');
  if (path === '/') return;
  if (path.endsWith('/')) throw badPath(path, 'it must not end with /');
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') throw badPath(path, 'it has an empty segment (//)');
    if (segment === '.' || segment === '..') throw badPath(path, `it has a '${segment}' segment`);
  }
}

/** Validates a path that names a node (not the root) and splits it into parent and name. */
export function nodePath(path: string): PathParts {
  validatePath(path);
  if (path === '/') throw invalidArgument(MetadataStoreReason.PATH_IS_ROOT, 'the root / cannot be written or deleted');
  const slash = path.lastIndexOf('/');
  return { path, parent: slash === 0 ? '/' : path.slice(0, slash), name: path.slice(slash + 1) };
}

/** Splits any valid path, the root included (its parent and name are empty). */
export function anyPath(path: string): PathParts {
  validatePath(path);
  if (path === '/') return { path, parent: '', name: '' };
  return nodePath(path);
}

function badPath(path: string, why: string): LedgerlineError {
  return invalidArgument(MetadataStoreReason.BAD_PATH, `'${path.slice(0, 200)}' is not a valid metadata path: ${why}`, {
    path: path.slice(0, 200),
  });
}

export function validateValue(value: Uint8Array, maxValueBytes: number): void {
  if (!(value instanceof Uint8Array))
    throw invalidArgument(MetadataStoreReason.BAD_VALUE, 'a value must be a Uint8Array');
  if (value.byteLength > maxValueBytes) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      MetadataStoreReason.VALUE_TOO_LARGE,
      `a value of ${value.byteLength} bytes exceeds the limit of ${maxValueBytes} bytes`,
      { details: { sizeBytes: String(value.byteLength), maxValueBytes: String(maxValueBytes) } },
    );
  }
}

/** Versions start at 1; 'absent' asks for a create. */
export function validateExpectedVersion(expected: ExpectedVersion | undefined, allowAbsent: boolean): void {
  if (expected === undefined) return;
  if (allowAbsent && expected === 'absent') return;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 1) {
    throw invalidArgument(
      MetadataStoreReason.BAD_EXPECTED_VERSION,
      `expectedVersion must be a version (an integer from 1)${allowAbsent ? " or 'absent'" : ''}`,
      { expectedVersion: String(expected) },
    );
  }
}

export function resolveChildrenOptions(options: ChildrenOptions = {}): { after: string; limit: number } {
  const limit = options.limit ?? DEFAULT_CHILDREN_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CHILDREN_PAGE) {
    throw invalidArgument(
      MetadataStoreReason.BAD_PAGE_SIZE,
      `limit must be an integer from 1 to ${MAX_CHILDREN_PAGE}`,
      {
        limit: String(limit),
      },
    );
  }
  const after = options.after ?? '';
  if (typeof after !== 'string' || Buffer.byteLength(after, 'utf8') > MAX_PATH_BYTES || after.includes('/')) {
    throw invalidArgument(MetadataStoreReason.BAD_PAGE_TOKEN, "'after' must be a child name from a previous page");
  }
  return { after, limit };
}

export function validateSequenceName(name: string): void {
  const valid =
    typeof name === 'string' &&
    name.length > 0 &&
    Buffer.byteLength(name, 'utf8') <= MAX_SEQUENCE_NAME_BYTES &&
    !hasControlCharacter(name) &&
    !LONE_SURROGATE.test(name);
  if (!valid) {
    throw invalidArgument(
      MetadataStoreReason.BAD_SEQUENCE_NAME,
      `a sequence name must be 1 to ${MAX_SEQUENCE_NAME_BYTES} UTF-8 bytes without control characters`,
    );
  }
}

export function validateTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < MIN_SESSION_TTL_MS || ttlMs > MAX_SESSION_TTL_MS) {
    throw invalidArgument(
      MetadataStoreReason.BAD_SESSION_TTL,
      `ttlMs must be an integer from ${MIN_SESSION_TTL_MS} to ${MAX_SESSION_TTL_MS}`,
      { ttlMs: String(ttlMs) },
    );
  }
}

/** Checks a store's maxValueBytes setting and fills in the default. */
export function resolveMaxValueBytes(maxValueBytes: number | undefined): number {
  const value = maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
  if (!Number.isInteger(value) || value < 1 || value > MAX_VALUE_BYTES) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, `maxValueBytes must be an integer from 1 to ${MAX_VALUE_BYTES}`);
  }
  return value;
}

/** The path of `name` under `parent`. */
export function joinPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}
