import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMetadataChange, metadataTreePattern, NatsBus } from '@ledgerline/bus';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { createMetadataStore } from './create-metadata-store.js';

describe('metadata changes over NATS', () => {
  it('reach a watcher on another connection, in order', async () => {
    const { natsUrl, redisUrl } = sharedServers();
    const publisherBus = await NatsBus.connect({ servers: natsUrl });
    const watcherBus = await NatsBus.connect({ servers: natsUrl });
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-metadata-nats-'));
    const root = `/${uniqueNamespace('nats')}`;
    const stores = [
      await createMetadataStore({ kind: 'sqlite', path: join(dir, 'm.db'), synchronous: 'NORMAL', bus: publisherBus }),
      await createMetadataStore({ kind: 'redis', url: redisUrl, keyPrefix: `${root}:`, bus: publisherBus }),
    ];
    const subscription = watcherBus.subscribe(metadataTreePattern(root));
    await watcherBus.flush();
    for (const [index, store] of stores.entries()) {
      await store.put(`${root}/${index}`, Uint8Array.of(1));
      await store.put(`${root}/${index}`, Uint8Array.of(2), { expectedVersion: 1 });
      await store.delete(`${root}/${index}`);
    }
    await publisherBus.flush();
    const received = [];
    for await (const message of subscription) {
      received.push(decodeMetadataChange(message.data));
      if (received.length === 6) break;
    }
    expect(received).toEqual(
      [0, 1].flatMap((index) => [
        { path: `${root}/${index}`, kind: 'created', version: 1 },
        { path: `${root}/${index}`, kind: 'modified', version: 2 },
        { path: `${root}/${index}`, kind: 'deleted', version: 0 },
      ]),
    );
    for (const store of stores) await store.close();
    await publisherBus.close();
    await watcherBus.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
