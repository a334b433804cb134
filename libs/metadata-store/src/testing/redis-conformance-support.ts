import { uniqueNamespace } from '@ledgerline/testing';
import type { MetadataStoreBackend } from './metadata-store-backend.js';
import type { RedisConnectionOptions as RedisTarget } from '@ledgerline/storage-kit';
import { connectMetadataRedis } from '../redis-store.js';
import type { RedisClient } from '../redis-scripts.js';
import { RedisMetadataStore } from '../redis-store.js';
import type { MetadataStore } from '../store.js';

/**
 * A conformance backend on Redis: each client has its own connection under a
 * key prefix unique to the suite; a crash drops the connection without
 * releasing anything.
 */
export function redisBackend(
  name: string,
  start: () => Promise<RedisTarget>,
  stop: (clean: (client: RedisClient, prefix: string) => Promise<void>) => Promise<void>,
): MetadataStoreBackend {
  const prefix = `${uniqueNamespace('meta')}:`;
  const clients = new Map<MetadataStore, RedisClient>();
  let target: RedisTarget;
  return {
    name,
    setup: async () => {
      target = await start();
    },
    open: async (options = {}) => {
      const client = await connectMetadataRedis(target);
      let store: RedisMetadataStore;
      try {
        store = new RedisMetadataStore(client, { ...options, keyPrefix: prefix });
      } catch (error) {
        // A refused configuration must not leave the connection open.
        client.disconnect();
        throw error;
      }
      clients.set(store, client);
      return store;
    },
    crash: async (store) => {
      clients.get(store)?.disconnect();
    },
    teardown: async () => {
      for (const client of clients.values()) client.disconnect();
      await stop(async (client) => deleteByPrefix(client, prefix));
    },
  };
}

/** Deletes every key under the prefix on one Redis, in bounded SCAN batches. */
export async function deleteByPrefix(client: RedisClient, prefix: string): Promise<void> {
  let cursor = '0';
  for (let round = 0; round < 100_000; round++) {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}
