import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { eventually } from '@ledgerline/testing';
import type { GetBalancerStatusResponse } from '@ledgerline/proto';
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients } from '../index.js';

/*
 * The balancer in a cluster that serves mutual TLS: the metadata service asks
 * the source owner to transfer with its own service certificate, and the
 * source has the target load the topic with the writer owner's. A refusal of
 * either call would show as failed moves and topics that never leave the
 * first owner.
 */

const TOPICS = 20;

describe('the balancer over mutual TLS', () => {
  let cluster: LocalCluster | undefined;
  let clients: ClusterClients | undefined;
  let sdk: LedgerlineClient | undefined;
  let dir: string | undefined;

  afterAll(async () => {
    await sdk?.close().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('moves half the topics to a writer owner that joins, and they serve from there', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-balancer-tls-'));
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1 },
      tls: { dir: join(dir, 'certs') },
      settings: {
        metadata: {
          LEDGERLINE_BALANCER_INTERVAL_MS: '1000',
          LEDGERLINE_BALANCER_WINDOW_ROUNDS: '2',
          LEDGERLINE_BALANCER_MESSAGES_PER_TOPIC: '1000000000',
        },
      },
    });
    clients = new ClusterClients(cluster);
    const tls = cluster.clientTls!;
    await clients.createRetainedNamespace('sec/ns');
    const names = Array.from({ length: TOPICS }, (_, i) => `persistent://sec/ns/t${i}`);
    await clients.admin.createTopics({ topics: names });
    sdk = createClient({
      serviceUrl: cluster.metadataTarget,
      tls: { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
      maxReconnectAttempts: 100,
    });
    // Asking a topic's owner for its stats loads it there (and leases it).
    for (const topic of names) await sdk.topicStats(topic);
    await cluster.add('writer-owner');

    let status: GetBalancerStatusResponse | undefined;
    await eventually(
      async () => {
        status = await clients!.admin.getBalancerStatus({});
        const counts = status.owners.map((owner) => owner.topics);
        return counts.length === 2 && counts.every((count) => count >= 8 && count <= 12);
      },
      { attempts: 120, intervalMs: 500, description: 'both writer owners holding 8 to 12 of the 20 topics' },
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}: last status ${JSON.stringify(status, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`,
      );
    });
    expect(status!.recentMoves.filter((move) => move.outcome !== 'moved')).toEqual([]);
    const moved = status!.recentMoves.map((move) => move.topic);
    expect(moved.length).toBeGreaterThan(0);
    const producer = await sdk.producer({ topic: moved[0]!, batching: false });
    expect((await producer.send('after the move')).offset).toBe(0n);
    await producer.close();
  }, 300_000);
});
