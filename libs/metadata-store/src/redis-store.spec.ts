import { sharedServers } from '@ledgerline/testing';
import { metadataStoreConformance } from './testing/metadata-store.conformance.js';
import { connectMetadataRedis } from './redis-store.js';
import { redisBackend } from './testing/redis-conformance-support.js';

metadataStoreConformance(
  redisBackend(
    'RedisMetadataStore on a single Redis',
    async () => ({ url: sharedServers().redisUrl }),
    async (clean) => {
      const client = await connectMetadataRedis({ url: sharedServers().redisUrl });
      await clean(client, '');
      client.disconnect();
    },
  ),
);
