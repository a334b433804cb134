// One collector instance as its own process for bench/gc-reclaim.ts: metadata
// and ledgers in the Redis the bench names. Prints {"started": id}; on a "go"
// line it runs passes until one deletes nothing, then prints {"done": deleted}; on "stop" it leaves and exits.
import { createInterface } from 'node:readline';
import { GarbageCollector, InProcessCollectorMetadata } from '@ledgerline/garbage-collector';
import { RedisLedgerStore } from '@ledgerline/ledger-store';
import { createMetadataStore } from '@ledgerline/metadata-store';

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as {
    url: string;
    metadataPrefix: string;
    ledgerPrefix: string;
    id: string;
    config: object;
  };
  const store = await createMetadataStore({ kind: 'redis', url: args.url, keyPrefix: args.metadataPrefix });
  const ledgerStore = new RedisLedgerStore({ url: args.url, keyPrefix: args.ledgerPrefix });
  const gc = new GarbageCollector({
    metadata: new InProcessCollectorMetadata(store, async () => 'missing'),
    ledgerStore,
    instanceId: args.id,
    config: args.config,
  });
  await gc.start();
  process.stdout.write(`${JSON.stringify({ started: args.id })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'stop') {
      // Leaving removes the member node, so the next row's instances do not wait out a TTL for it.
      await gc.stop();
      await ledgerStore.close();
      await store.close();
      process.exit(0);
    }
    if (line !== 'go') continue;
    for (;;) {
      const report = await gc.triggerPass();
      if (report.ledgersDeleted === 0 && report.failures === 0) break;
    }
    process.stdout.write(`${JSON.stringify({ done: gc.status().ledgersDeleted })}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`gc bench worker failed: ${String(error)}\n`);
  process.exit(1);
});
