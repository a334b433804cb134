import { sharedServers } from '@ledgerline/testing';
import { metadataStoreConformance } from './testing/metadata-store.conformance.js';
import { connectRedis } from './redis-connection.js';
import { redisBackend } from './testing/redis-conformance-support.js';

metadataStoreConformance(
  redisBackend(
    'RedisMetadataStore on a single Redis',
    async () => ({ url: sharedServers().redisUrl }),
    async (clean) => {
      const client = await connectRedis({ url: sharedServers().redisUrl });
      await clean(client, '');
      client.disconnect();
    },
  ),
);
