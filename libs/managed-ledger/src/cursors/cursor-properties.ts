import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '../reasons.js';

/** A cursor property name is 1 to this many UTF-16 code units, like a cursor name's bound but for a map key. */
export const MAX_CURSOR_PROPERTY_NAME_LENGTH = 256;

/** Checks a numeric property (stored with the mark-delete position) before it is set; undefined removes it. */
export function checkNumericProperty(
  properties: Map<string, bigint | number>,
  name: string,
  value: bigint | number | undefined,
  maxProperties: number,
): void {
  checkPropertyName(name, properties, maxProperties);
  if (value !== undefined && !(typeof value === 'bigint' || Number.isSafeInteger(value))) {
    throw invalidArgument(ManagedLedgerReason.INVALID_CURSOR_PROPERTY, `property ${name} must be an integer`);
  }
}

/** Checks a string property of the cursor before it is set; undefined removes it. */
export function checkStringProperty(
  properties: Map<string, string>,
  name: string,
  value: string | undefined,
  maxProperties: number,
): void {
  checkPropertyName(name, properties, maxProperties);
  if (value !== undefined && typeof value !== 'string') {
    throw invalidArgument(ManagedLedgerReason.INVALID_CURSOR_PROPERTY, `cursor property ${name} must be a string`);
  }
}

function checkPropertyName(name: string, map: Map<string, unknown>, maxProperties: number): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CURSOR_PROPERTY_NAME_LENGTH) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_CURSOR_PROPERTY,
      `a property name must be 1 to ${MAX_CURSOR_PROPERTY_NAME_LENGTH} characters`,
    );
  }
  if (!map.has(name) && map.size >= maxProperties) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      ManagedLedgerReason.INVALID_CURSOR_PROPERTY,
      'too many cursor properties (maxProperties)',
    );
  }
}
