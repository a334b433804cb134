import { Gauge, type Registry } from 'prom-client';
import type { LoadMeter, OwnerLoad } from './owner-load.js';

type Figure = Exclude<keyof OwnerLoad, 'intervalMs' | 'busiestTopics'>;

/** Each figure of an owner's load as a gauge, by the owner's role (standalone hosts both owners in one process). */
const GAUGES: readonly { figure: Figure; name: string; help: string }[] = [
  { figure: 'topicsOwned', name: 'ledgerline_owner_topics_owned', help: 'Topics this owner holds the lease of' },
  {
    figure: 'messagesInPerSecond',
    name: 'ledgerline_owner_messages_in_per_second',
    help: 'Messages stored per second (last keep-alive)',
  },
  {
    figure: 'bytesInPerSecond',
    name: 'ledgerline_owner_bytes_in_per_second',
    help: 'Entry bytes stored per second (last keep-alive)',
  },
  {
    figure: 'messagesOutPerSecond',
    name: 'ledgerline_owner_messages_out_per_second',
    help: 'Messages delivered per second (last keep-alive)',
  },
  {
    figure: 'bytesOutPerSecond',
    name: 'ledgerline_owner_bytes_out_per_second',
    help: 'Payload bytes delivered per second (last keep-alive)',
  },
  { figure: 'consumers', name: 'ledgerline_owner_consumers', help: 'Open consume streams' },
  { figure: 'pendingEntries', name: 'ledgerline_owner_pending_entries', help: 'Entries taken and not yet stored' },
  {
    figure: 'storageBytes',
    name: 'ledgerline_owner_storage_bytes',
    help: 'Bytes of entries in the ledgers of the topics held (last keep-alive)',
  },
  {
    figure: 'cpuShare',
    name: 'ledgerline_owner_cpu_share',
    help: 'CPU time of the process over wall time (1 = one core busy)',
  },
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
  for (const { figure, name, help } of GAUGES) {
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
