import { invalidArgument } from '@ledgerline/errors';
import { BusReason } from './bus-errors.js';

/**
 * Notification payloads: a magic byte, a format version byte, then a small
 * UTF-8 JSON object. JSON keeps them readable with `nats sub`; the header lets
 * a later format sit beside this one. Decoders treat bytes as untrusted: every
 * field is checked and anything malformed is INVALID_ARGUMENT /
 * BAD_NOTIFICATION, so a consumer can skip it and carry on.
 */
export const NOTIFICATION_MAGIC = 0xb1;
export const NOTIFICATION_FORMAT_VERSION = 1;
/** Largest notification payload a decoder reads. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;
/** Most ledger ids one LedgersDeletableNotification carries; publish several for more. */
export const MAX_DELETABLE_LEDGERS_PER_NOTIFICATION = 1000;

export interface MetadataChangeNotification {
  path: string;
  kind: 'created' | 'modified' | 'deleted';
  /** The new version; 0 for a deletion. */
  version: number;
}

export interface LacAdvancedNotification {
  ledgerId: number;
  /** The new last-add-confirmed entry id (-1: nothing confirmed yet). */
  lac: number;
  /** The offset of the last message of that entry, when the writer knows it. */
  offset?: number;
  /** When the writer's store confirmed that entry (ms since the epoch): readers measure propagation from it. */
  confirmedAtMs?: number;
}

export interface ManagedLedgerNotification {
  /** The managed ledger name (`tenant/namespace/persistent/encoded-local`). */
  name: string;
  /** 'rolled': a new ledger was added; 'info-changed': anything else in ManagedLedgerInfo. */
  kind: 'rolled' | 'info-changed';
  /** The metadata version of ManagedLedgerInfo after the change. */
  version: number;
  /** The newest ledger after a roll. */
  ledgerId?: number;
}

export interface LedgersDeletableNotification {
  /** The managed ledger whose ledgers were marked. */
  name: string;
  ledgerIds: number[];
}

const CHANGE_KINDS = ['created', 'modified', 'deleted'] as const;
const MANAGED_LEDGER_KINDS = ['rolled', 'info-changed'] as const;

export function encodeMetadataChange(change: MetadataChangeNotification): Uint8Array {
  return encode({ path: change.path, kind: change.kind, version: change.version });
}

export function decodeMetadataChange(bytes: Uint8Array): MetadataChangeNotification {
  const json = decode(bytes);
  return {
    path: stringField(json, 'path'),
    kind: oneOf(json, 'kind', CHANGE_KINDS),
    version: integerField(json, 'version', 0),
  };
}

export function encodeLacAdvanced(notification: LacAdvancedNotification): Uint8Array {
  const { ledgerId, lac, offset, confirmedAtMs } = notification;
  return encode({
    ledgerId,
    lac,
    ...(offset === undefined ? {} : { offset }),
    ...(confirmedAtMs === undefined ? {} : { confirmedAtMs }),
  });
}

export function decodeLacAdvanced(bytes: Uint8Array): LacAdvancedNotification {
  const json = decode(bytes);
  const notification: LacAdvancedNotification = {
    ledgerId: integerField(json, 'ledgerId', 0),
    lac: integerField(json, 'lac', -1),
  };
  if (json['offset'] !== undefined) notification.offset = integerField(json, 'offset', 0);
  if (json['confirmedAtMs'] !== undefined) notification.confirmedAtMs = integerField(json, 'confirmedAtMs', 0);
  return notification;
}

export function encodeManagedLedgerNotification(notification: ManagedLedgerNotification): Uint8Array {
  const { name, kind, version, ledgerId } = notification;
  return encode(ledgerId === undefined ? { name, kind, version } : { name, kind, version, ledgerId });
}

export function decodeManagedLedgerNotification(bytes: Uint8Array): ManagedLedgerNotification {
  const json = decode(bytes);
  const notification: ManagedLedgerNotification = {
    name: stringField(json, 'name'),
    kind: oneOf(json, 'kind', MANAGED_LEDGER_KINDS),
    version: integerField(json, 'version', 0),
  };
  if (json['ledgerId'] !== undefined) notification.ledgerId = integerField(json, 'ledgerId', 0);
  return notification;
}

export function encodeLedgersDeletable(notification: LedgersDeletableNotification): Uint8Array {
  if (notification.ledgerIds.length > MAX_DELETABLE_LEDGERS_PER_NOTIFICATION) {
    throw invalidArgument(
      BusReason.TOO_MANY_LEDGERS,
      `one notification carries at most ${MAX_DELETABLE_LEDGERS_PER_NOTIFICATION} ledger ids; split the list`,
    );
  }
  return encode({ name: notification.name, ledgerIds: notification.ledgerIds });
}

export function decodeLedgersDeletable(bytes: Uint8Array): LedgersDeletableNotification {
  const json = decode(bytes);
  const ids = json['ledgerIds'];
  if (!Array.isArray(ids) || ids.length > MAX_DELETABLE_LEDGERS_PER_NOTIFICATION) {
    throw badNotification(`'ledgerIds' must be an array of at most ${MAX_DELETABLE_LEDGERS_PER_NOTIFICATION} ids`);
  }
  return {
    name: stringField(json, 'name'),
    ledgerIds: ids.map((id, index) => integerField({ id }, 'id', 0, `ledgerIds[${index}]`)),
  };
}

function encode(body: Record<string, unknown>): Uint8Array {
  const json = JSON.stringify(body);
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(json, 'utf8') + 2);
  bytes[0] = NOTIFICATION_MAGIC;
  bytes[1] = NOTIFICATION_FORMAT_VERSION;
  bytes.write(json, 2, 'utf8');
  return bytes;
}

function decode(bytes: Uint8Array): Record<string, unknown> {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < 3) throw badNotification('it is shorter than its header');
  if (bytes.byteLength > MAX_NOTIFICATION_BYTES) {
    throw badNotification(`it is longer than ${MAX_NOTIFICATION_BYTES} bytes`);
  }
  if (bytes[0] !== NOTIFICATION_MAGIC) throw badNotification(`its magic byte is ${bytes[0]}`);
  if (bytes[1] !== NOTIFICATION_FORMAT_VERSION) throw badNotification(`its format version ${bytes[1]} is unknown`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(2)));
  } catch {
    throw badNotification('its body is not UTF-8 JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badNotification('its body is not a JSON object');
  }
  return parsed as Record<string, unknown>;
}

function stringField(json: Record<string, unknown>, name: string): string {
  const value = json[name];
  if (typeof value !== 'string' || value.length === 0) throw badNotification(`'${name}' must be a non-empty string`);
  return value;
}

function integerField(json: Record<string, unknown>, name: string, minimum: number, label = name): number {
  const value = json[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw badNotification(`'${label}' must be an integer of at least ${minimum}`);
  }
  return value;
}

function oneOf<T extends string>(json: Record<string, unknown>, name: string, allowed: readonly T[]): T {
  const value = json[name];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw badNotification(`'${name}' must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function badNotification(why: string) {
  return invalidArgument(BusReason.BAD_NOTIFICATION, `the notification payload is malformed: ${why}`);
}
