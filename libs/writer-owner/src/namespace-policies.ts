import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '@ledgerline/managed-ledger';
import type { TopicName } from '@ledgerline/naming';
import { OwnerReason, type MetadataClients } from '@ledgerline/ownership';
import type { Policies } from '@ledgerline/proto';
import { LRUCache } from 'lru-cache';

const MINUTE_MS = 60_000;
const MiB = 1024 * 1024;

/**
 * How long a namespace's policies serve topic loads once read. A drain moves
 * dozens of topics of one namespace to an owner within a second, and each
 * load read them again, one metadata round trip in every transfer's pause.
 * A second is as stale as they get: the bucket count never changes, a
 * namespace becomes a reader (PIP-63) only while it holds no topic of its
 * own, so none a load could find, and retention changed within the second
 * reaches the topic at its next load, as a change after a load always did.
 */
export const NAMESPACE_POLICIES_TTL_MS = 1_000;
/** Namespaces whose policies are kept at once. */
const MAX_NAMESPACES = 1_000;

/** The policies topic loads read: at most one read per namespace per TTL, concurrent loads sharing it. */
export class NamespacePolicies {
  private readonly cache: LRUCache<string, { policies: Policies | undefined }>;

  /** `clients.admin` is read at each fetch: an owner binds its clients once it has started. */
  constructor(
    clients: Pick<MetadataClients, 'admin'>,
    ttlMs = NAMESPACE_POLICIES_TTL_MS,
    clock: { now(): number } = performance,
  ) {
    this.cache = new LRUCache({
      max: MAX_NAMESPACES,
      ttl: ttlMs,
      perf: clock,
      ttlResolution: 0,
      fetchMethod: async (namespace) => ({
        policies: (await clients.admin.getNamespace({ namespace })).namespace?.policies,
      }),
    });
  }

  /** The policies of `topic`'s namespace; READONLY_TOPIC when its namespace takes no writes (PIP-63). */
  async writable(topic: TopicName): Promise<Policies | undefined> {
    const { policies } = (await this.cache.fetch(topic.namespaceName.toString()))!;
    const writerNamespace = policies?.writerNamespace ?? '';
    if (writerNamespace !== '' || policies?.readonly === true) {
      const writerTopic = writerNamespace === '' ? '' : `${topic.domain}://${writerNamespace}/${topic.localName}`;
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        OwnerReason.READONLY_TOPIC,
        `${topic.toString()} is in a read-only namespace${writerTopic === '' ? '' : `: publish to ${writerTopic}`}`,
        { details: { topic: topic.toString(), writer_topic: writerTopic } },
      );
    }
    return policies;
  }
}

/** A topic's retention from its namespace's policies (Pulsar's RetentionPolicies). */
export function retentionConfig(policies: Policies | undefined): ManagedLedgerConfigInput {
  const minutes = Number(policies?.retentionTimeMinutes ?? 0n);
  const megabytes = Number(policies?.retentionSizeMb ?? 0n);
  return {
    retentionTimeMs: minutes < 0 ? -1 : minutes * MINUTE_MS,
    retentionSizeBytes: megabytes < 0 ? -1 : megabytes * MiB,
  };
}
