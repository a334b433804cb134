import { z } from 'zod';
import { OwnerLoadRecordSchema } from './owner-load.js';

/** The schemas of every record the service stores (see layout.ts for where). */

export const PoliciesRecordSchema = z.object({
  numberOfTopicBuckets: z.number().int().min(1),
  maxTopics: z.number().int().min(0),
  retentionTimeMinutes: z.number().int().min(-1),
  retentionSizeMb: z.number().int().min(-1),
  ownerGroup: z.string(),
  /** `tenant/ns` of the writer namespace on a reader namespace, else ''. */
  writerNamespace: z.string(),
  readonly: z.boolean(),
  /** Records written before the policy existed have none: they never auto-created, so absent reads as false. */
  allowAutoTopicCreation: z.boolean().default(false),
});
export type PoliciesRecord = z.infer<typeof PoliciesRecordSchema>;

/** What a role may do on every topic of a namespace (Pulsar's AuthAction). */
export const AuthActionSchema = z.enum(['produce', 'consume']);
export type AuthActionName = z.infer<typeof AuthActionSchema>;

export const NamespaceRecordSchema = z.object({
  policies: PoliciesRecordSchema,
  /** role -> actions; absent on records written before permissions existed, which grant nothing. */
  permissions: z.record(z.string(), z.array(AuthActionSchema)).optional(),
  createdAtMs: z.number(),
  /** Set by DeleteNamespace before it takes the namespace apart; creates are refused from then on. */
  deleting: z.boolean(),
  /**
   * True for a namespace created since the Kafka gateway indexes its groups' commits (kafka-group-index.ts): none
   * of its groups committed before the index, so a group without a record has no commit there. Absent on older ones.
   */
  kafkaGroupsIndexed: z.boolean().optional(),
});
export type NamespaceRecord = z.infer<typeof NamespaceRecordSchema>;

export const TenantRecordSchema = z.object({
  adminRoles: z.array(z.string()),
  createdAtMs: z.number(),
});
export type TenantRecord = z.infer<typeof TenantRecordSchema>;

/** Topics reserved or created in a namespace; never below the real count (see topic-counter.ts). */
export const CounterRecordSchema = z.object({ count: z.number().int().min(0) });
export type CounterRecord = z.infer<typeof CounterRecordSchema>;

/** A topic id as stored: a UUID's 16 bytes as 32 lowercase hex digits. */
export const TopicIdSchema = z.string().regex(/^[0-9a-f]{32}$/, 'a topic id is 32 lowercase hex digits');

export const PartitionedTopicRecordSchema = z.object({
  partitions: z.number().int().min(1),
  createdAtMs: z.number(),
  /** The topic's id (Kafka's topic id); absent on records written before ids existed, until first asked for. */
  topicId: TopicIdSchema.optional(),
});
export type PartitionedTopicRecord = z.infer<typeof PartitionedTopicRecordSchema>;

/**
 * The id of a non-partitioned topic created before ids existed (a topic created
 * since carries it in its ManagedLedgerInfo, see topic-ids.ts).
 */
export const TopicIdRecordSchema = z.object({ topicId: TopicIdSchema });

/** The topic-id index: an id to the topic it was given to (checked against the topic on every lookup). */
export const TopicIdIndexRecordSchema = z.object({ topic: z.string() });

export const TombstoneRecordSchema = z.object({ deletedAtMs: z.number() });

export const ReaderIndexRecordSchema = z.object({ reader: z.string() });

/** 'kafka-gateway': a Kafka gateway registered so gateways find each other; it never holds a lease. */
export const OwnerRoleSchema = z.enum(['writer', 'readonly', 'kafka-gateway']);
export type OwnerRoleName = z.infer<typeof OwnerRoleSchema>;

/** An owner instance and the session that keeps it alive (`expiresAtMs` moves on every keep-alive). */
export const OwnerRecordSchema = z.object({
  instanceId: z.string(),
  role: OwnerRoleSchema,
  group: z.string(),
  advertisedAddress: z.string(),
  sessionId: z.string(),
  ttlMs: z.number().int(),
  expiresAtMs: z.number(),
  registeredAtMs: z.number(),
  /** The load reported with the last keep-alive, and when it arrived (this service's clock). */
  load: OwnerLoadRecordSchema.optional(),
  loadReportedAtMs: z.number().optional(),
  /** A draining owner keeps its leases, but lookups place no topic without a lease on it. */
  draining: z.boolean().optional(),
});
export type OwnerRecord = z.infer<typeof OwnerRecordSchema>;

/** A session id points at its owner node, so a keep-alive needs only the id. */
export const SessionRecordSchema = z.object({ group: z.string(), instanceId: z.string() });
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/**
 * A topic lease. `sessionId` is '' when the lease is free: a released lease
 * stays as a node so that its version (the lease epoch) only ever grows.
 */
export const LeaseRecordSchema = z.object({
  sessionId: z.string(),
  group: z.string(),
  instanceId: z.string(),
  advertisedAddress: z.string(),
  acquiredAtMs: z.number(),
  /**
   * Set by a transfer: the session that handed the lease over, until the
   * target takes it up (acquires it), so the source may reclaim a lease its
   * target never loaded.
   */
  handedOverBy: z.string().optional(),
});
export type LeaseRecord = z.infer<typeof LeaseRecordSchema>;

/**
 * A Kafka group's index of committed partitions in one namespace (its entries are the record's children):
 * `partial` may miss commits made before the index existed, `complete` holds them all, `unindexed` grew past its
 * bound and is found by scanning. `entries` is never below the children's count (it is raised before an entry is
 * written and lowered after one is removed), so the bound holds.
 */
export const KafkaGroupIndexRecordSchema = z.object({
  state: z.enum(['partial', 'complete', 'unindexed']),
  entries: z.number().int().min(0),
});
export type KafkaGroupIndexRecord = z.infer<typeof KafkaGroupIndexRecordSchema>;
