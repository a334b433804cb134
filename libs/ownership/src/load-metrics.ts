import { Gauge, type Registry } from 'prom-client';
import type { LoadMeter, OwnerLoad } from './owner-load.js';

type Figure = Exclude<keyof OwnerLoad, 'intervalMs'>;

/** Each figure of an owner's load as a gauge, by the owner's role (standalone hosts both owners in one process). */
const GAUGES: readonly [Figure, string, string][] = [
  ['topicsOwned', 'ledgerline_owner_topics_owned', 'Topics this owner holds the lease of'],
  ['messagesInPerSecond', 'ledgerline_owner_messages_in_per_second', 'Messages stored per second (last keep-alive)'],
  ['bytesInPerSecond', 'ledgerline_owner_bytes_in_per_second', 'Entry bytes stored per second (last keep-alive)'],
  [
    'messagesOutPerSecond',
    'ledgerline_owner_messages_out_per_second',
    'Messages delivered per second (last keep-alive)',
  ],
  [
    'bytesOutPerSecond',
    'ledgerline_owner_bytes_out_per_second',
    'Payload bytes delivered per second (last keep-alive)',
  ],
  ['consumers', 'ledgerline_owner_consumers', 'Open consume streams'],
  ['pendingEntries', 'ledgerline_owner_pending_entries', 'Entries taken and not yet stored'],
  ['cpuShare', 'ledgerline_owner_cpu_share', 'CPU time of the process over wall time (1 = one core busy)'],
];

const meters = new WeakMap<Registry, Map<string, LoadMeter>>();

/**
 * Exports `meter`'s last sample (the load the owner reported with its last
 * keep-alive) as `ledgerline_owner_*` gauges labelled with `role`, so the
 * dashboard shows what the metadata service and a balancer see.
 */
export function exportLoadMetrics(registry: Registry, role: string, meter: LoadMeter): void {
  const known = meters.get(registry);
  if (known !== undefined) {
    known.set(role, meter);
    return;
  }
  const byRole = new Map([[role, meter]]);
  meters.set(registry, byRole);
  for (const [figure, name, help] of GAUGES) {
    new Gauge({
      name,
      help,
      labelNames: ['role'],
      registers: [registry],
      collect() {
        for (const [each, source] of byRole) this.set({ role: each }, source.latest[figure]);
      },
    });
  }
}
