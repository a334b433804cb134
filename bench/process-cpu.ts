// CPU time per message for every process in a benchmark row: the headline
// figure of the publish and consume rows, because on a shared 2-core machine
// CPU time holds steadier than throughput (a neighbour's load slows a run down
// but barely changes what each message costs).
//
// A process's CPU time is read from /proc/<pid>/task/*/schedstat (nanoseconds
// on a CPU, every thread: V8's GC helpers and libuv's pool count too), the
// bench's own from process.cpuUsage(). Redis's also from `INFO cpu` would be
// the same figure at a coarser grain, so every process is read one way.
import { readdirSync, readFileSync } from 'node:fs';

/** A process whose CPU time a row reports. `pid` undefined means the bench process itself (the client). */
export interface MeteredProcess {
  readonly name: string;
  readonly pid: number | undefined;
}

/** Nanoseconds on a CPU so far, every thread of `pid`, or of this process. */
export function cpuNanos(pid: number | undefined): number {
  if (pid === undefined) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) * 1000;
  }
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that exited between the listing and the read: its time is gone with it.
    }
  }
  return total;
}

/** CPU microseconds per message of each process, and their total, over one measured stretch. */
export type CpuPerMessage = Record<string, number> & { total: number };

/** Takes a reading of every process now; `perMessage` turns the time since into microseconds per message. */
export function startCpuMeter(processes: readonly MeteredProcess[]): {
  perMessage(messages: number): CpuPerMessage;
} {
  const before = processes.map((p) => cpuNanos(p.pid));
  return {
    perMessage(messages) {
      const result = { total: 0 } as CpuPerMessage;
      processes.forEach((p, index) => {
        const micros = (cpuNanos(p.pid) - before[index]!) / 1000 / Math.max(1, messages);
        result[p.name] = Math.round(micros * 10) / 10;
        result.total += micros;
      });
      result.total = Math.round(result.total * 10) / 10;
      return result;
    },
  };
}

/** Every process of the Ledgerline rows (the bench process is the client), and the peer's (client + its server). */
export interface Metered {
  ours: MeteredProcess[];
  peer: MeteredProcess[];
}

/** Runs `measure`, reading the CPU time every process in `processes` spent on it, per message it reports. */
export async function metered<T extends { messages: number }>(
  processes: readonly MeteredProcess[],
  measure: () => Promise<T>,
): Promise<T & { cpu: CpuPerMessage }> {
  const meter = startCpuMeter(processes);
  const result = await measure();
  return { ...result, cpu: meter.perMessage(result.messages) };
}

/** A CPU table row with a column for each of `columns`, '-' where the row's system has no such process. */
export function cpuTableRow(
  system: string,
  cpu: CpuPerMessage,
  columns: readonly MeteredProcess[],
): Record<string, string | number> {
  const row: Record<string, string | number> = { system };
  for (const { name } of columns) row[`${name} µs/msg`] = cpu[name] ?? '-';
  row['total µs/msg'] = cpu.total;
  return row;
}

/** The processes of a cluster row: the bench process as client, then the services and the stores. */
export function clusterProcesses(
  services: { metadata: number | undefined; writer: number | undefined },
  stores: { redis: number | undefined; nats: number | undefined },
): Metered {
  return {
    ours: [
      { name: 'client', pid: undefined },
      { name: 'writer owner', pid: services.writer },
      { name: 'metadata', pid: services.metadata },
      { name: 'redis', pid: stores.redis },
      { name: 'nats', pid: stores.nats },
    ],
    peer: [
      { name: 'client', pid: undefined },
      { name: 'redis', pid: stores.redis },
    ],
  };
}
