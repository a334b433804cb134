import { invalidArgument } from '@ledgerline/errors';
import { BusReason } from './bus-errors.js';

/**
 * Every notification subject of the system, in one place. Publishers and
 * watchers build subjects only through these functions, so a subject never
 * drifts between the two sides.
 *
 * | subject                                   | payload (notification-codec.ts) | published by        |
 * | ----------------------------------------- | ------------------------------- | ------------------- |
 * | `ledgerline.meta.<path tokens>`           | MetadataChangeNotification      | metadata store      |
 * | `ledgerline.ledger.<ledger id>.lac`       | LacAdvancedNotification         | writer owner        |
 * | `ledgerline.managed-ledger.<name tokens>` | ManagedLedgerNotification       | writer owner        |
 * | `ledgerline.ledgers.deletable`            | LedgersDeletableNotification    | writer owner, admin |
 *
 * Path and name tokens are `/`-separated segments escaped with
 * encodeSubjectToken, so any valid metadata path is a valid subject.
 */
export const SUBJECT_ROOT = 'ledgerline';
export const METADATA_SUBJECT_PREFIX = `${SUBJECT_ROOT}.meta`;
export const LEDGER_SUBJECT_PREFIX = `${SUBJECT_ROOT}.ledger`;
export const MANAGED_LEDGER_SUBJECT_PREFIX = `${SUBJECT_ROOT}.managed-ledger`;
export const LEDGERS_DELETABLE_SUBJECT = `${SUBJECT_ROOT}.ledgers.deletable`;

// Characters that stand for themselves in a token; every other UTF-8 byte becomes %XX.
const PLAIN_BYTE = /^[A-Za-z0-9_-]$/;
const PLAIN_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * Escapes one path segment into a subject token: letters, digits, `-` and `_`
 * stay, every other UTF-8 byte becomes `%XX` (upper-case hex). The result has
 * no `.`, `*`, `>` or whitespace, so it is always exactly one literal token.
 */
export function encodeSubjectToken(segment: string): string {
  if (segment.length === 0) throw invalidArgument(BusReason.BAD_SUBJECT, 'a subject token cannot be empty');
  if (PLAIN_TOKEN.test(segment)) return segment;
  let token = '';
  for (const byte of Buffer.from(segment, 'utf8')) {
    const character = String.fromCharCode(byte);
    token += PLAIN_BYTE.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return token;
}

/** Reverses encodeSubjectToken; INVALID_ARGUMENT on a token it could not have produced. */
export function decodeSubjectToken(token: string): string {
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(token)) {
    throw invalidArgument(BusReason.BAD_SUBJECT, `'${token.slice(0, 200)}' is not an escaped subject token`);
  }
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    if (token[i] === '%') {
      bytes.push(parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(token.charCodeAt(i));
    }
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    return decoder.decode(Uint8Array.from(bytes));
  } catch {
    throw invalidArgument(BusReason.BAD_SUBJECT, `the token '${token.slice(0, 200)}' does not decode to UTF-8`);
  }
}

function pathTokens(path: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw invalidArgument(BusReason.BAD_PATH, `'${String(path).slice(0, 200)}' is not an absolute path`);
  }
  return path === '/' ? [] : path.slice(1).split('/').map(encodeSubjectToken);
}

function join(prefix: string, tokens: string[]): string {
  return tokens.length === 0 ? prefix : `${prefix}.${tokens.join('.')}`;
}

/** The subject a change of the node at `path` is published on. */
export function metadataChangedSubject(path: string): string {
  return join(METADATA_SUBJECT_PREFIX, pathTokens(path));
}

/** Pattern for changes of every node below `path` at any depth (not `path` itself). */
export function metadataTreePattern(path: string): string {
  return `${join(METADATA_SUBJECT_PREFIX, pathTokens(path))}.>`;
}

/** Pattern for changes of the immediate children of `path`. */
export function metadataChildrenPattern(path: string): string {
  return `${join(METADATA_SUBJECT_PREFIX, pathTokens(path))}.*`;
}

/** The metadata path a metadata subject stands for (the inverse of metadataChangedSubject). */
export function pathOfMetadataSubject(subject: string): string {
  if (subject === METADATA_SUBJECT_PREFIX) return '/';
  if (!subject.startsWith(`${METADATA_SUBJECT_PREFIX}.`)) {
    throw invalidArgument(BusReason.BAD_SUBJECT, `'${subject.slice(0, 200)}' is not a metadata subject`);
  }
  const tokens = subject.slice(METADATA_SUBJECT_PREFIX.length + 1).split('.');
  return `/${tokens.map(decodeSubjectToken).join('/')}`;
}

/** The subject a ledger's last-add-confirmed advances are published on. */
export function ledgerLacSubject(ledgerId: number): string {
  if (!Number.isSafeInteger(ledgerId) || ledgerId < 0) {
    throw invalidArgument(BusReason.BAD_LEDGER_ID, `ledger id ${String(ledgerId)} is not a non-negative integer`);
  }
  return `${LEDGER_SUBJECT_PREFIX}.${ledgerId}.lac`;
}

/** Pattern for the LAC advances of every ledger. */
export const ALL_LEDGERS_LAC_PATTERN = `${LEDGER_SUBJECT_PREFIX}.*.lac`;

/**
 * The subject for a managed ledger's events (a ledger rolled over, its
 * ManagedLedgerInfo changed); `name` is the managed ledger name
 * (`tenant/namespace/persistent/encoded-local`), `/`-separated.
 */
export function managedLedgerSubject(name: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.startsWith('/')) {
    throw invalidArgument(
      BusReason.BAD_MANAGED_LEDGER_NAME,
      `'${String(name).slice(0, 200)}' is not a managed ledger name`,
    );
  }
  return join(MANAGED_LEDGER_SUBJECT_PREFIX, pathTokens(`/${name}`));
}

/** Pattern for the events of every managed ledger. */
export const ALL_MANAGED_LEDGERS_PATTERN = `${MANAGED_LEDGER_SUBJECT_PREFIX}.>`;
