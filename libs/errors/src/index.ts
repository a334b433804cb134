export { LedgerlineError, Code, codeName, invalidArgument } from './ledgerline-error.js';
export type { CodeName, CodeValue, LedgerlineErrorOptions } from './ledgerline-error.js';
export { unexpectedRejection } from './unexpected-rejection.js';
