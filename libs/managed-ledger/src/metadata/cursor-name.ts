import { decodeLocalName, encodeLocalName } from '@ledgerline/naming';
import { invalidArgument } from '@ledgerline/errors';
import { ManagedLedgerReason } from '../reasons.js';
import { MAX_CURSOR_NAME_LENGTH } from './metadata-access.js';

/** Checks a cursor (subscription) name from outside. */
export function validateCursorName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CURSOR_NAME_LENGTH) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_CURSOR_NAME,
      `a cursor name must be a string of 1 to ${MAX_CURSOR_NAME_LENGTH} characters`,
    );
  }
  return name;
}

/** The cursor node's path: a child of the managed ledger node, URL-encoded like a topic's local name. */
export function cursorPath(managedLedgerPath: string, cursorName: string): string {
  return `${managedLedgerPath}/${encodeLocalName(validateCursorName(cursorName))}`;
}

export function cursorNameFromNode(nodeName: string): string {
  return decodeLocalName(nodeName);
}
