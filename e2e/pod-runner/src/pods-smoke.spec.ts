import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findRepositoryRoot } from '@ledgerline/cluster';
import { linksWithPrefix, namespacesWithPrefix, processAlive } from './index.js';
import { PodRunner } from './pod-runner.js';
import {
  DEV_DEPLOYMENTS,
  NO_VIOLATIONS,
  PodWorkload,
  ensureAppBundles,
  modelViolations,
  podLogTails,
  summaryFigures,
} from './testing/index.js';

/*
 * The dev overlay as pods: up, produce and consume from a client pod through
 * the metadata Service's name, a rolling restart of every Deployment under
 * that load with nothing lost, down, and nothing of the run left on the
 * machine (namespaces, links, /etc/netns folders, processes).
 */

const root = findRepositoryRoot(__dirname);
const KCAT_TIMEOUT_MS = 60_000;

describe('the dev overlay as pods', () => {
  let runner: PodRunner | undefined;
  let workload: PodWorkload | undefined;
  const pids = new Set<number>();

  beforeAll(() => {
    ensureAppBundles(root);
  }, 900_000);

  afterAll(async () => {
    await workload?.kill();
    await runner?.down();
  }, 300_000);

  it('serves through Service names, rolls every Deployment under load without losing a message, and leaves nothing behind', async () => {
    const startedMs = Date.now();
    runner = await PodRunner.up({
      overlay: join(root, 'deploy/overlays/dev'),
      root,
      log: (line) => process.stdout.write(`${line}\n`),
    });
    const upMs = Date.now() - startedMs;
    const pods = runner.status();
    // Our Deployments and the two stores (redis-0, nats-0).
    expect(pods.filter((pod) => pod.ready)).toHaveLength(DEV_DEPLOYMENTS.length + 2);
    for (const pod of pods) pod.pids.forEach((pid) => pids.add(pid));

    await runner.addClientPod('client');
    // A StatefulSet's pods have DNS names only behind a headless governing Service (this found redis and nats without one).
    for (const [pod, service] of [
      ['redis-0', 'redis'],
      ['nats-0', 'nats'],
    ] as const) {
      const answer = spawnSync(
        'ip',
        ['netns', 'exec', runner.pod('client').plan.netns, 'getent', 'hosts', `${pod}.${service}`],
        {
          encoding: 'utf8',
        },
      );
      expect(answer.stdout.split(/\s+/)[0]).toBe(runner.pod(pod).ip);
    }
    workload = await PodWorkload.start(runner, 'client', 'smoke');
    await workload.waitForAcks(200, 60_000);
    // A Kafka client in the client pod, through the gateway's Service name: the bootstrap answers with the
    // gateway pod's own address (its downward-API advertised listener), which the client then reaches. Run
    // without blocking: the Service proxies the gateway's calls to the metadata service go through live here.
    // kcat stopped at the time limit exits 0 (it ends cleanly on SIGTERM, its messages undelivered): that is a
    // failure, told apart by the kill.
    const kcat = (args: string[], input = '') =>
      new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          'ip',
          ['netns', 'exec', runner!.pod('client').plan.netns, 'kcat', '-b', 'ledgerline-kafka-gateway:9092', ...args],
          { timeout: KCAT_TIMEOUT_MS },
          (error, stdout, stderr) => {
            const code = child.killed ? `stopped after ${KCAT_TIMEOUT_MS} ms` : error === null ? 0 : error.code;
            resolve({ code: code ?? null, stdout, stderr });
          },
        );
        child.stdin?.end(input);
      });
    // Once the SDK's load is acknowledged: right after up a writer owner may still be registering (its health
    // answers first), and the gateway answers NOT_LEADER until it is, which kcat gave up on once in CI.
    const produced = await kcat(['-P', '-t', 'smoke-kafka', '-K', ':'], 'k1:one\nk2:two\n');
    // A failure shows what every pod logged above info: the gateway's reason for NOT_LEADER is in its log.
    expect([produced.code, produced.code === 0 ? '' : `${produced.stderr}\n${podLogTails(runner.runDir)}`]).toEqual([
      0,
      '',
    ]);
    // kcat -C quits at its first consumer error (a fetch that timed out on a loaded machine, say) where a
    // long-running client retries, and once exited 1 reading nothing. It is asked again, up to eight times,
    // 4 s apart, also when it read too little; each failed try is printed with kcat's reason. -m 30: metadata
    // may take the gateway up to its 10 s backend bound, past kcat's 5 s default.
    const consumeArgs = ['-C', '-t', 'smoke-kafka', '-p', '0', '-o', 'beginning', '-e', '-m', '30', '-f', '%o %k %s\n'];
    let consumed = await kcat(consumeArgs);
    for (let tried = 1; tried < 8 && (consumed.code !== 0 || consumed.stdout.trim().split('\n').length < 2); tried++) {
      process.stdout.write(
        `pods smoke: kcat -C try ${tried} failed (status ${consumed.code}, read ${JSON.stringify(consumed.stdout)}): ${consumed.stderr}\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      consumed = await kcat(consumeArgs);
    }
    // As for the produce: a failure shows kcat's reason and what every pod logged above info.
    expect([
      consumed.code,
      consumed.stdout.trim().split('\n'),
      consumed.code === 0 ? '' : `${consumed.stderr}\n${podLogTails(runner.runDir)}`,
    ]).toEqual([0, ['0 k1 one', '1 k2 two'], '']);

    const rollStartedMs = Date.now();
    await Promise.all(DEV_DEPLOYMENTS.map((name) => runner!.rolloutRestart(name)));
    const rollMs = Date.now() - rollStartedMs;
    for (const name of DEV_DEPLOYMENTS) {
      const rolled = runner.podsOf(name);
      expect(rolled).toHaveLength(1);
      expect(rolled[0]!.plan.revision).toBe(runner.revisions.get(name));
      expect(rolled[0]!.ready).toBe(true);
    }
    const ackedAfterRoll = workload.acked();
    await workload.waitForAcks(ackedAfterRoll + 200, 60_000);
    const summary = await workload.stop();
    workload = undefined;
    process.stdout.write(
      `pods smoke: up ${upMs} ms, rollout of ${DEV_DEPLOYMENTS.length} Deployments ${rollMs} ms; ${summaryFigures(summary)}\n` +
        `${JSON.stringify(summary)}\n`,
    );
    // Every acknowledged message reached the subscription. A consumer that gave up on the way (consumerStops,
    // printed above) was replaced by the workload, as an application would replace it.
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    expect(summary.acked).toBeGreaterThan(ackedAfterRoll);

    for (const pod of runner.status()) pod.pids.forEach((pid) => pids.add(pid));
    const prefix = runner.prefix;
    await runner.down();
    runner = undefined;
    expect(namespacesWithPrefix(prefix)).toEqual([]);
    expect(linksWithPrefix(prefix)).toEqual([]);
    expect(existsSync('/etc/netns') ? readdirSync('/etc/netns').filter((name) => name.startsWith(prefix)) : []).toEqual(
      [],
    );
    expect([...pids].filter((pid) => processAlive(pid))).toEqual([]);
  }, 900_000);
});
