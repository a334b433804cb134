import { NamespaceName, NamingErrorReason } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { MAX_NAMESPACE_TOPIC_BUCKETS, MAX_OWNER_GROUP_LENGTH, MAX_TOPICS_POLICY } from '../limits.js';
import type { PoliciesRecord } from '../records/records.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * Namespace policies as a request states them: every field optional, so an
 * update says exactly what it changes (the proto's `optional` presence).
 */
export interface PolicyInput {
  numberOfTopicBuckets?: number | undefined;
  maxTopics?: number | undefined;
  retentionTimeMinutes?: number | bigint | undefined;
  retentionSizeMb?: number | bigint | undefined;
  ownerGroup?: string | undefined;
  writerNamespace?: string | undefined;
  readonly?: boolean | undefined;
  allowAutoTopicCreation?: boolean | undefined;
}

/** The owner group of a namespace whose policies name none. */
export const DEFAULT_OWNER_GROUP = 'default';

export const DEFAULT_POLICIES: PoliciesRecord = {
  numberOfTopicBuckets: 1,
  maxTopics: 0,
  retentionTimeMinutes: 0,
  retentionSizeMb: 0,
  ownerGroup: DEFAULT_OWNER_GROUP,
  writerNamespace: '',
  readonly: false,
  // Unlike Pulsar's broker default (true): a topic is created first, so a mistyped name is refused, not created.
  allowAutoTopicCreation: false,
};

const OWNER_GROUP = /^[A-Za-z0-9_.:-]+$/;

/** Checks an owner group name (also used for owner registration) and returns it. */
export function validateOwnerGroup(group: unknown): string {
  if (
    typeof group !== 'string' ||
    group.length === 0 ||
    group.length > MAX_OWNER_GROUP_LENGTH ||
    !OWNER_GROUP.test(group) ||
    group === '.' ||
    group === '..'
  ) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_OWNER_GROUP,
      `owner group must be 1 to ${MAX_OWNER_GROUP_LENGTH} characters of letters, digits, '_', '.', ':' and '-'` +
        ` (not '.' or '..'), got ${describe(group)}`,
    );
  }
  return group;
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
}

function integerIn(value: number | bigint, min: number, max: number, reason: string, what: string): number {
  const number = typeof value === 'bigint' ? Number(value) : value;
  if (!Number.isSafeInteger(number) || number < min || number > max || BigInt(number) !== BigInt(value)) {
    throw invalidArgument(reason, `${what} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return number;
}

/** Validates the policies of a new namespace, filling defaults. The PIP-63 fields are checked by the caller. */
export function policiesForCreate(input: PolicyInput | undefined): PoliciesRecord {
  return mergePolicies(DEFAULT_POLICIES, input ?? {});
}

/**
 * Applies an update to stored policies. The bucket count is fixed at creation:
 * any different value is FAILED_PRECONDITION / BUCKETS_IMMUTABLE (the same
 * value is accepted, so a client may send back what it read).
 */
export function policiesForUpdate(current: PoliciesRecord, input: PolicyInput): PoliciesRecord {
  if (input.numberOfTopicBuckets !== undefined && input.numberOfTopicBuckets !== current.numberOfTopicBuckets) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataServiceReason.BUCKETS_IMMUTABLE,
      `numberOfTopicBuckets is fixed when a namespace is created (it is ${current.numberOfTopicBuckets}); ` +
        'create a new namespace to use a different bucket count',
      { details: { current: String(current.numberOfTopicBuckets) } },
    );
  }
  return mergePolicies(current, input);
}

function mergePolicies(base: PoliciesRecord, input: PolicyInput): PoliciesRecord {
  const merged: PoliciesRecord = { ...base };
  if (input.numberOfTopicBuckets !== undefined) {
    merged.numberOfTopicBuckets = integerIn(
      input.numberOfTopicBuckets,
      1,
      MAX_NAMESPACE_TOPIC_BUCKETS,
      NamingErrorReason.INVALID_BUCKET_COUNT,
      'numberOfTopicBuckets',
    );
  }
  if (input.maxTopics !== undefined) {
    merged.maxTopics = integerIn(
      input.maxTopics,
      0,
      MAX_TOPICS_POLICY,
      MetadataServiceReason.INVALID_MAX_TOPICS,
      'maxTopics (0 = unlimited)',
    );
  }
  const maxRetention = Number.MAX_SAFE_INTEGER;
  if (input.retentionTimeMinutes !== undefined) {
    merged.retentionTimeMinutes = integerIn(
      input.retentionTimeMinutes,
      -1,
      maxRetention,
      MetadataServiceReason.INVALID_RETENTION,
      'retentionTimeMinutes (-1 = infinite)',
    );
  }
  if (input.retentionSizeMb !== undefined) {
    merged.retentionSizeMb = integerIn(
      input.retentionSizeMb,
      -1,
      maxRetention,
      MetadataServiceReason.INVALID_RETENTION,
      'retentionSizeMb (-1 = infinite)',
    );
  }
  if (input.ownerGroup !== undefined) merged.ownerGroup = validateOwnerGroup(input.ownerGroup);
  if (input.allowAutoTopicCreation !== undefined) merged.allowAutoTopicCreation = input.allowAutoTopicCreation;
  return merged;
}

/** The writer namespace a request names, parsed; '' means "not a reader". */
export function parseWriterNamespace(value: string): NamespaceName | undefined {
  return value === '' ? undefined : NamespaceName.parse(value);
}
