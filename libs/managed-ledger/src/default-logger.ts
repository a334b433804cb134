import pino from 'pino';
import type { ManagedLedgerLogger } from './context.js';

let defaultLogger: ManagedLedgerLogger | undefined;

/** A pino logger at level warn (or LEDGERLINE_LOG_LEVEL), made once. */
export function defaultManagedLedgerLogger(): ManagedLedgerLogger {
  defaultLogger ??= pino({ name: 'managed-ledger', level: process.env['LEDGERLINE_LOG_LEVEL'] ?? 'warn' });
  return defaultLogger;
}
