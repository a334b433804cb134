import { invalidArgument, ErrorReason } from '@ledgerline/errors';
import type { RedisConnectionOptions, SqliteSynchronous } from '@ledgerline/storage-kit';
import { RedisMetadataStore } from './redis-store.js';
import { SqliteMetadataStore } from './sqlite-store.js';
import type { MetadataStore, MetadataStoreOptions } from './store.js';

/** An embedded store in one SQLite file (standalone mode). */
export interface SqliteMetadataStoreConfig extends MetadataStoreOptions {
  kind: 'sqlite';
  path: string;
  synchronous?: SqliteSynchronous;
}

/** A store on one Redis (`url`) or on a Redis Cluster (`cluster.startupNodes`): exactly one of them. */
export interface RedisMetadataStoreConfig extends MetadataStoreOptions, RedisConnectionOptions {
  kind: 'redis';
  url?: string;
  cluster?: { startupNodes: { host: string; port: number }[] };
  keyPrefix?: string;
}

export type MetadataStoreConfig = SqliteMetadataStoreConfig | RedisMetadataStoreConfig;

/**
 * Opens the store a configuration names. Bad settings are INVALID_ARGUMENT /
 * INVALID_CONFIG; a Redis that does not answer is UNAVAILABLE /
 * STORE_UNAVAILABLE.
 */
export async function createMetadataStore(config: MetadataStoreConfig): Promise<MetadataStore> {
  switch (config?.kind) {
    case 'sqlite':
      return new SqliteMetadataStore(config);
    case 'redis': {
      if ((config.url === undefined) === (config.cluster === undefined)) {
        throw invalidArgument(
          ErrorReason.INVALID_CONFIG,
          'a Redis metadata store needs exactly one of url and cluster',
        );
      }
      const { url, cluster, connectTimeoutMs, commandTimeoutMs, maxReconnectDelayMs, ...options } = config;
      const target = url !== undefined ? { url } : { cluster };
      return RedisMetadataStore.connect(
        { ...target, connectTimeoutMs, commandTimeoutMs, maxReconnectDelayMs },
        options,
      );
    }
    default:
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `the metadata store kind must be 'sqlite' or 'redis', not '${String((config as { kind?: unknown })?.kind)}'`,
      );
  }
}
