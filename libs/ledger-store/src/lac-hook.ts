import type { LedgerStoreOptions } from './store.js';

/**
 * Calls the "LAC advanced" hook. It carries hints only (readers also poll),
 * so a throwing hook must never turn an acknowledged append into a failure.
 */
export function notifyLacAdvanced(
  hook: LedgerStoreOptions['onLacAdvanced'],
  ledgerId: number,
  lastAddConfirmed: number,
): void {
  if (hook === undefined) return;
  try {
    hook(ledgerId, lastAddConfirmed);
  } catch {
    // A hint that could not be sent is a hint missed; watchers converge by polling.
  }
}
