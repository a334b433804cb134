import { OWNER_GROUP_LIST_CONCURRENCY, OWNER_READ_CONCURRENCY } from '../limits.js';
import { randomUUID } from 'node:crypto';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { ownerPath, ownersGroupDir, OWNERS_DIR, sessionPath } from '../records/layout.js';
import {
  DEFAULT_SESSION_TTL_MS,
  MAX_ADVERTISED_ADDRESS_LENGTH,
  MAX_INSTANCE_ID_LENGTH,
  MAX_OWNERS_PER_GROUP,
  MAX_SESSION_TTL_MS,
  MAX_SWEEP_REMOVALS,
  MIN_SESSION_TTL_MS,
} from '../limits.js';
import { validateOwnerGroup } from '../admin/policies.js';
import {
  OwnerRecordSchema,
  OwnerRoleSchema,
  SessionRecordSchema,
  type OwnerRecord,
  type OwnerRoleName,
} from '../records/records.js';
import {
  deleteIfUnchanged,
  ensureDirectory,
  forEachChildPage,
  listChildren,
  readRecord,
  writeRecord,
} from '../records/store-records.js';
import pMap from 'p-map';
import type { OwnerLoadRecord } from '../records/owner-load.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * Owner sessions. An owner instance registers with its group and role and
 * gets a session that lives while it calls keep-alive within its TTL. The
 * session is data in the store (the owner node carries its deadline), not a
 * connection of one metadata instance: any instance serves any keep-alive, and
 * restarting the metadata service drops no session. Expiry is judged by the
 * metadata instances' clocks, which must agree to well within a TTL.
 */
export interface OwnerRegistration {
  instanceId: string;
  role: OwnerRoleName;
  group: string;
  advertisedAddress: string;
}

const INSTANCE_ID = /^[A-Za-z0-9_.:-]+$/;

function validateRegistration(owner: OwnerRegistration): void {
  const { instanceId, advertisedAddress } = owner;
  if (
    instanceId.length === 0 ||
    instanceId.length > MAX_INSTANCE_ID_LENGTH ||
    !INSTANCE_ID.test(instanceId) ||
    /^\.\.?$/.test(instanceId)
  ) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_INSTANCE_ID,
      `an instance id is 1 to ${MAX_INSTANCE_ID_LENGTH} characters of letters, digits, '_', '.', ':' and '-'`,
    );
  }
  validateOwnerGroup(owner.group);
  if (!OwnerRoleSchema.options.includes(owner.role)) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_OWNER_ROLE,
      `an owner's role is ${OwnerRoleSchema.options.join(', ')}`,
    );
  }
  if (advertisedAddress.length === 0 || advertisedAddress.length > MAX_ADVERTISED_ADDRESS_LENGTH) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_ADVERTISED_ADDRESS,
      `an advertised address (host:port) is 1 to ${MAX_ADVERTISED_ADDRESS_LENGTH} characters long`,
    );
  }
}

export function sessionTtl(ttlMs: number): number {
  if (ttlMs === 0) return DEFAULT_SESSION_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs < MIN_SESSION_TTL_MS || ttlMs > MAX_SESSION_TTL_MS) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_SESSION_TTL,
      `a session TTL is 0 (default ${DEFAULT_SESSION_TTL_MS}) or ${MIN_SESSION_TTL_MS} to ${MAX_SESSION_TTL_MS} ms, got ${ttlMs}`,
    );
  }
  return ttlMs;
}

export function isLive(owner: OwnerRecord, nowMs: number): boolean {
  return owner.expiresAtMs > nowMs;
}

/**
 * Registers an owner and opens its session. A second registration of the same
 * instance id replaces the first (a restarted owner): the old session ends at
 * once, and with it every lease it held.
 */
export async function registerOwner(context: AdminContext, owner: OwnerRegistration, ttlMs: number) {
  validateRegistration(owner);
  const ttl = sessionTtl(ttlMs);
  const sessionId = randomUUID();
  const now = context.now();
  const previous = await readRecord(context.store, ownerPath(owner.group, owner.instanceId), OwnerRecordSchema);
  // The group's directory node makes the group visible to listOwnerGroups (children lists existing nodes only).
  await ensureDirectory(context.store, ownersGroupDir(owner.group));
  await writeRecord(context.store, sessionPath(sessionId), { group: owner.group, instanceId: owner.instanceId });
  const record: OwnerRecord = { ...owner, sessionId, ttlMs: ttl, expiresAtMs: now + ttl, registeredAtMs: now };
  await writeRecord(context.store, ownerPath(owner.group, owner.instanceId), record);
  if (previous !== undefined) await context.store.delete(sessionPath(previous.record.sessionId));
  return { sessionId, ttlMs: ttl, owner: record };
}

function sessionGone(sessionId: string): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    MetadataServiceReason.SESSION_EXPIRED,
    `owner session ${sessionId} is unknown or has expired; register again (its leases are gone)`,
    { details: { sessionId } },
  );
}

function validateSessionId(sessionId: string): void {
  if (!/^[0-9a-f-]{36}$/.test(sessionId))
    throw invalidArgument(MetadataServiceReason.INVALID_SESSION_ID, 'a session id is the UUID RegisterOwner returned');
}

/** The live owner of a session, or undefined. */
export async function liveOwnerOf(context: AdminContext, sessionId: string): Promise<OwnerRecord | undefined> {
  validateSessionId(sessionId);
  const pointer = await readRecord(context.store, sessionPath(sessionId), SessionRecordSchema);
  if (pointer === undefined) return undefined;
  const owner = await readRecord(
    context.store,
    ownerPath(pointer.record.group, pointer.record.instanceId),
    OwnerRecordSchema,
  );
  if (owner === undefined || owner.record.sessionId !== sessionId || !isLive(owner.record, context.now()))
    return undefined;
  return owner.record;
}

export async function requireLiveOwner(context: AdminContext, sessionId: string): Promise<OwnerRecord> {
  const owner = await liveOwnerOf(context, sessionId);
  if (owner === undefined) throw sessionGone(sessionId);
  return owner;
}

/** Extends a live session by its TTL from now, storing the load it reported when it did. */
export async function keepAlive(
  context: AdminContext,
  sessionId: string,
  load?: OwnerLoadRecord,
): Promise<OwnerRecord> {
  validateSessionId(sessionId);
  const pointer = await readRecord(context.store, sessionPath(sessionId), SessionRecordSchema);
  if (pointer === undefined) throw sessionGone(sessionId);
  const path = ownerPath(pointer.record.group, pointer.record.instanceId);
  return retryOnConflict(`keeping session ${sessionId} alive`, async () => {
    const owner = await readRecord(context.store, path, OwnerRecordSchema);
    const now = context.now();
    if (owner === undefined || owner.record.sessionId !== sessionId || !isLive(owner.record, now))
      throw sessionGone(sessionId);
    const refreshed: OwnerRecord = {
      ...owner.record,
      expiresAtMs: now + owner.record.ttlMs,
      ...(load === undefined ? {} : { load, loadReportedAtMs: now }),
    };
    await writeRecord(context.store, path, refreshed, owner.version);
    return refreshed;
  });
}

/** Ends a session now; unknown sessions are ignored. */
export async function unregisterOwner(context: AdminContext, sessionId: string): Promise<void> {
  validateSessionId(sessionId);
  const pointer = await readRecord(context.store, sessionPath(sessionId), SessionRecordSchema);
  if (pointer === undefined) return;
  const path = ownerPath(pointer.record.group, pointer.record.instanceId);
  const owner = await readRecord(context.store, path, OwnerRecordSchema);
  if (owner !== undefined && owner.record.sessionId === sessionId)
    await deleteIfUnchanged(context.store, path, owner.version);
  await context.store.delete(sessionPath(sessionId));
}

/** Live owners of a group ('' for every group), of one role when given, at most MAX_OWNERS_PER_GROUP per group. */
export async function listLiveOwners(
  context: AdminContext,
  group: string,
  role?: OwnerRoleName,
): Promise<OwnerRecord[]> {
  if (group === '') {
    const groups = await listOwnerGroups(context);
    return (
      await pMap(groups, (each) => listLiveOwners(context, each, role), { concurrency: OWNER_GROUP_LIST_CONCURRENCY })
    ).flat();
  }
  validateOwnerGroup(group);
  const { names } = await listChildren(context.store, ownersGroupDir(group), MAX_OWNERS_PER_GROUP);
  const owners = await pMap(names, (name) => readRecord(context.store, ownerPath(group, name), OwnerRecordSchema), {
    concurrency: OWNER_READ_CONCURRENCY,
  });
  const now = context.now();
  return owners
    .filter((owner) => owner !== undefined && isLive(owner.record, now))
    .map((owner) => owner!.record)
    .filter((owner) => role === undefined || owner.role === role);
}

/** Every group that has (or had) owners. */
export async function listOwnerGroups(context: AdminContext): Promise<string[]> {
  return (await listChildren(context.store, OWNERS_DIR, MAX_OWNERS_PER_GROUP)).names;
}

/**
 * Removes owner nodes whose session expired, and their session pointers, at
 * most MAX_SWEEP_REMOVALS per call. Lookups already ignore expired owners;
 * this only reclaims their space. Each removal compares versions, so an owner
 * that renewed meanwhile stays.
 */
export async function sweepExpiredOwners(context: AdminContext): Promise<number> {
  let removed = 0;
  for (const group of await listOwnerGroups(context)) {
    await forEachChildPage(context.store, ownersGroupDir(group), async (names) => {
      for (const name of names) {
        if (removed >= MAX_SWEEP_REMOVALS) return;
        const owner = await readRecord(context.store, ownerPath(group, name), OwnerRecordSchema);
        if (owner === undefined || isLive(owner.record, context.now())) continue;
        if (await deleteIfUnchanged(context.store, ownerPath(group, name), owner.version)) {
          await context.store.delete(sessionPath(owner.record.sessionId));
          removed++;
        }
      }
    });
    if (removed >= MAX_SWEEP_REMOVALS) break;
  }
  return removed;
}
