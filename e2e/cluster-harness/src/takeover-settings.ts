import type { LocalClusterOptions } from '@ledgerline/cluster';

/**
 * Settings for tests that move topics between writer owners: a short lease (a killed owner's topics
 * move after `leaseTtlMs`), a metadata sweep every second that notices it, and a drain bound long
 * enough for a SIGTERM hand-over under load.
 */
export function takeoverSettings(leaseTtlMs: number): NonNullable<LocalClusterOptions['settings']> {
  return {
    metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '1000' },
    'writer-owner': { LEDGERLINE_LEASE_TTL_MS: String(leaseTtlMs), LEDGERLINE_DRAIN_TIMEOUT_MS: '10000' },
  };
}
