import { decodeMetadataChange, metadataTreePattern, type Bus, type MetadataChangeNotification } from '@ledgerline/bus';
import { DEFAULT_CHILDREN_PAGE, MAX_CHILDREN_PAGE, type MetadataStore } from '@ledgerline/metadata-store';
import { ChangeKind, MetadataStoreService } from '@ledgerline/proto';
import { invalidArgument } from '@ledgerline/errors';
import { type ServiceImpl } from '@ledgerline/rpc';
import { MAX_WATCH_BUFFER, MAX_WATCH_PREFIX_BYTES } from '../limits.js';
import { safeNumber } from '../proto-mapping.js';
import { checkStoreWrite, refuseServiceOwnedPath } from './store-api-guard.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

const CHANGE_KINDS: Record<MetadataChangeNotification['kind'], ChangeKind> = {
  created: ChangeKind.CREATED,
  modified: ChangeKind.MODIFIED,
  deleted: ChangeKind.DELETED,
};

/** Children page tokens are the last name of the previous page, base64url so they stay opaque. */
function decodeChildrenToken(token: string): string | undefined {
  if (token === '') return undefined;
  if (!/^[A-Za-z0-9_-]+$/.test(token) || token.length > 4096) {
    throw invalidArgument(MetadataServiceReason.INVALID_PAGE_TOKEN, 'the page token is not one Children handed out');
  }
  return Buffer.from(token, 'base64url').toString('utf8');
}

function childrenLimit(pageSize: number): number {
  if (pageSize === 0) return DEFAULT_CHILDREN_PAGE;
  if (pageSize < 0 || pageSize > MAX_CHILDREN_PAGE) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_PAGE_SIZE,
      `page size must be 0 (default ${DEFAULT_CHILDREN_PAGE}) to ${MAX_CHILDREN_PAGE}, got ${pageSize}`,
    );
  }
  return pageSize;
}

/**
 * Which bus subjects carry changes under a path prefix: the subtree of the
 * prefix's parent directory, filtered by the prefix as a string (so `/a/b`
 * also matches `/a/bc`, as "prefix" says; end it with `/` for a subtree).
 */
function watchPattern(prefix: string): string {
  const parent = prefix.slice(0, Math.max(1, prefix.lastIndexOf('/')));
  return metadataTreePattern(parent);
}

/** A notification that does not decode is skipped: notifications are hints, and a bad one is no reason to end a watch. */
function decodeChange(bytes: Uint8Array): MetadataChangeNotification | undefined {
  try {
    return decodeMetadataChange(bytes);
  } catch {
    return undefined;
  }
}

function validatePrefix(prefix: string): string {
  const value = prefix === '' ? '/' : prefix;
  if (!value.startsWith('/') || Buffer.byteLength(value) > MAX_WATCH_PREFIX_BYTES) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_PATH_PREFIX,
      `a watch prefix is an absolute path of at most ${MAX_WATCH_PREFIX_BYTES} bytes`,
    );
  }
  return value;
}

/**
 * ledgerline.v1.MetadataStoreService: the store for the other services (writes
 * are checked by store-api-guard.ts so they cannot break the admin API). Watch
 * streams the bus's change notifications under a prefix; like the bus it is
 * at most once (a slow client loses the oldest of more than MAX_WATCH_BUFFER
 * pending changes), so watchers re-read and compare versions.
 */
export function metadataStoreServiceImpl(store: MetadataStore, bus: Bus): ServiceImpl<typeof MetadataStoreService> {
  return {
    async get(request) {
      const node = await store.get(request.path);
      if (node === undefined) return {};
      return {
        node: {
          value: node.value,
          version: BigInt(node.version),
          createdAtMs: BigInt(node.createdAtMs),
          modifiedAtMs: BigInt(node.modifiedAtMs),
        },
      };
    },
    async exists(request) {
      return { exists: await store.exists(request.path) };
    },
    async put(request) {
      checkStoreWrite(request.path, request.value);
      const { expected } = request;
      const expectedVersion =
        expected.case === 'expectedVersion'
          ? safeNumber(expected.value, 'expected_version')
          : expected.case === 'expectAbsent' && expected.value
            ? ('absent' as const)
            : undefined;
      const version = await store.put(
        request.path,
        request.value,
        expectedVersion === undefined ? {} : { expectedVersion },
      );
      return { version: BigInt(version) };
    },
    async delete(request) {
      refuseServiceOwnedPath(request.path);
      const { expectedVersion } = request;
      await store.delete(
        request.path,
        expectedVersion === undefined ? {} : { expectedVersion: safeNumber(expectedVersion, 'expected_version') },
      );
      return {};
    },
    async children(request) {
      const after = decodeChildrenToken(request.pageToken);
      const page = await store.children(request.path, {
        limit: childrenLimit(request.pageSize),
        ...(after === undefined ? {} : { after }),
      });
      return {
        names: page.names,
        nextPageToken: page.next === undefined ? '' : Buffer.from(page.next, 'utf8').toString('base64url'),
      };
    },
    watch(request, context) {
      return watchChanges(bus, request.pathPrefix, context.signal);
    },
  };
}

/** The changes under a prefix, from the bus, until the client goes away. */
async function* watchChanges(bus: Bus, pathPrefix: string, signal: AbortSignal) {
  const prefix = validatePrefix(pathPrefix);
  const subscription = bus.subscribe(watchPattern(prefix), { bufferSize: MAX_WATCH_BUFFER, overflow: 'drop-oldest' });
  const stop = () => subscription.unsubscribe();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const message of subscription) {
      const change = decodeChange(message.data);
      if (change === undefined || !change.path.startsWith(prefix)) continue;
      yield { path: change.path, kind: CHANGE_KINDS[change.kind], version: BigInt(change.version) };
    }
  } finally {
    signal.removeEventListener('abort', stop);
    subscription.unsubscribe();
  }
}
