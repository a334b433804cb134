// A member of a consumer group restarting, static (group.instance.id,
// KIP-345) and dynamic, through the Kafka gateway of one standalone (issue
// 42, item 5: "static membership keeps a restarted member's assignment
// without a rebalance"). confluent-kafka (Debian's python3-confluent-kafka,
// librdkafka) runs a paced producer and a group of two, a and b, on a
// 4-partition topic (bench/kafka-static-restart.py); b is closed and started
// again. Per kind: whether a was revoked (and how often), how long it held
// nothing, its longest gap between deliveries and its worst end-to-end
// latency from the restart on (beside the same before it), and how long b
// was away. Static: a sees nothing of it; dynamic: b's LeaveGroup and its
// return rebalance the group.
//
// Run: npx tsx bench/kafka-static-restart.ts [--rate 200] [--seconds 5]
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@ledgerline/testing';
import { startStandalone, stopChild } from './baselines.js';
import { flag, runAlone, type BenchReport } from './bench-report.js';

const RATE = flag('rate', 200);
const SECONDS = flag('seconds', 5);
/** Debian's python3-confluent-kafka is installed for the system's Python, not whichever python3 is first on PATH. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, 'kafka-static-restart.py');
const RUN_TIMEOUT_MS = 300_000;
/** The group's first generation forms at once; a rebalance of a group with members never waits for it. */
const GATEWAY_ARGS = [
  '--read-only-grpc-port',
  '0',
  '--kafka-host',
  '127.0.0.1',
  '--group-initial-rebalance-delay-ms',
  '0',
];

interface Outcome {
  steadyGapMs: number;
  pauseMs: number;
  aRevoked: boolean;
  aRevokes: number;
  aUnassignedMs: number;
  steadyWorstLatencyMs: number;
  restartWorstLatencyMs: number;
  bAwayMs: number;
}

function restart(broker: string, kind: 'static' | 'dynamic'): Promise<Outcome> {
  const args = [SCRIPT, broker, `restart-${kind}`, `restart-${kind}`, kind, String(RATE), String(SECONDS)];
  return new Promise((resolve, reject) => {
    execFile(PYTHON, args, { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) =>
      error === null
        ? resolve(JSON.parse(stdout) as Outcome)
        : reject(new Error(`the ${kind} restart run failed: ${error.message}\n${stderr}`)),
    );
  });
}

const ms = (value: number): number => Math.round(value);

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-kafka-static-'));
  let child: ChildProcess | undefined;
  try {
    const [grpcPort, kafkaPort] = [await freePort(), await freePort()];
    child = await startStandalone(dataDir, grpcPort, [...GATEWAY_ARGS, '--kafka-port', String(kafkaPort)]);
    const broker = `127.0.0.1:${kafkaPort}`;
    const rows = [];
    for (const kind of ['static', 'dynamic'] as const) {
      const outcome = await restart(broker, kind);
      rows.push({
        member: kind === 'static' ? 'static (group.instance.id)' : 'dynamic',
        'a revoked': outcome.aRevoked,
        'a revokes': outcome.aRevokes,
        'a held nothing (ms)': ms(outcome.aUnassignedMs),
        "a's longest gap, restart on (ms)": ms(outcome.pauseMs),
        "a's longest gap, before (ms)": ms(outcome.steadyGapMs),
        "a's worst latency, restart on (ms)": ms(outcome.restartWorstLatencyMs),
        "a's worst latency, before (ms)": ms(outcome.steadyWorstLatencyMs),
        'b away (ms)': ms(outcome.bAwayMs),
        'load average': loadavg()[0]!.toFixed(1),
      });
    }
    return {
      section: 'Kafka group: a member restarting, static and dynamic',
      setup:
        `confluent-kafka 1.7 (librdkafka 2.0), a group of two on a 4-partition topic, ${RATE} msg/s of 100 B, ` +
        `${SECONDS} s steady, then b closed and started again, and ${SECONDS} s after it is back`,
      tables: [{ title: 'What the other member (a) sees while b restarts', rows }],
      comparisons: [],
    };
  } finally {
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runAlone(module, run);
