import { SQLITE_SYNCHRONOUS_VALUES } from '@ledgerline/storage-kit';
import { z } from 'zod';
import { invalidArgument, ErrorReason } from '@ledgerline/errors';
import { MAX_WAIT_REPLICAS } from './redis-options.js';
import { RedisLedgerStore } from './redis-store.js';
import { SqliteLedgerStore } from './sqlite-store.js';
import type { LedgerStore, LedgerStoreOptions } from './store.js';

const positiveInt = z.number().int().positive();

const LimitsSchema = z
  .strictObject({
    maxEntryBytes: positiveInt,
    maxAppendEntries: positiveInt,
    maxAppendBytes: positiveInt,
    maxReadEntries: positiveInt,
  })
  .partial();

const SqliteConfigSchema = z.strictObject({
  kind: z.literal('sqlite'),
  path: z.string().min(1),
  synchronous: z.enum(SQLITE_SYNCHRONOUS_VALUES).optional(),
  busyTimeoutMs: z.number().int().nonnegative().optional(),
  limits: LimitsSchema.optional(),
});

const RedisConfigSchema = z
  .strictObject({
    kind: z.literal('redis'),
    url: z
      .string()
      .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
      .optional(),
    cluster: z
      .strictObject({
        startupNodes: z
          .array(z.strictObject({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }))
          .min(1),
      })
      .optional(),
    keyPrefix: z
      .string()
      .max(128)
      .regex(/^[^{}]*$/, 'must not contain { or }')
      .optional(),
    waitReplicas: z.number().int().min(0).max(MAX_WAIT_REPLICAS).optional(),
    waitTimeoutMs: positiveInt.optional(),
    connectTimeoutMs: positiveInt.optional(),
    commandTimeoutMs: positiveInt.optional(),
    maxReconnectDelayMs: positiveInt.optional(),
    connectionName: z.string().min(1).optional(),
    limits: LimitsSchema.optional(),
  })
  .refine((c) => (c.url === undefined) !== (c.cluster === undefined), {
    message: 'give exactly one of url and cluster',
  });

/** What `createLedgerStore` accepts: plain data, so it can come from environment variables or a file. */
export const LedgerStoreConfigSchema = z.discriminatedUnion('kind', [SqliteConfigSchema, RedisConfigSchema]);
export type LedgerStoreConfig = z.input<typeof LedgerStoreConfigSchema>;

/**
 * Opens the ledger store a configuration names: `{kind: 'sqlite', path}` for
 * standalone mode, `{kind: 'redis', url | cluster, keyPrefix, waitReplicas}`
 * for a cluster. A bad configuration is INVALID_ARGUMENT / INVALID_CONFIG
 * naming every problem. Hooks (the "LAC advanced" hint) are code, so they come
 * apart from the configuration.
 */
export function createLedgerStore(
  config: LedgerStoreConfig,
  hooks: Pick<LedgerStoreOptions, 'onLacAdvanced'> = {},
): LedgerStore {
  const parsed = LedgerStoreConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      `bad ledger store configuration: ${z.prettifyError(parsed.error)}`,
    );
  }
  const { kind, ...options } = parsed.data;
  if (kind === 'sqlite') return new SqliteLedgerStore({ ...options, ...hooks } as SqliteConfig);
  return new RedisLedgerStore({ ...options, ...hooks });
}

type SqliteConfig = ConstructorParameters<typeof SqliteLedgerStore>[0];
