import { spawnSync } from 'node:child_process';
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
  summaryFigures,
} from './testing/index.js';

/*
 * The dev overlay as pods: up, produce and consume from a client pod through
 * the metadata Service's name, a rolling restart of every Deployment under
 * that load with nothing lost, down, and nothing of the run left on the
 * machine (namespaces, links, /etc/netns folders, processes).
 */

const root = findRepositoryRoot(__dirname);

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
    expect(pods.filter((pod) => pod.ready)).toHaveLength(7);
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
