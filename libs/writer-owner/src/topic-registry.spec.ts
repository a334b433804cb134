import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { RpcReason } from '@ledgerline/rpc';
import { refusal } from '@ledgerline/testing';
import { Registry } from 'prom-client';
import { resolveWriterSettings } from './config.js';
import { writerMetrics } from './metrics.js';
import { TopicRegistry, type TopicRegistryOptions } from './topic-registry.js';

const TOPIC = 'persistent://t/ns/moved';

/**
 * A registry whose metadata service answers the lease at once but fails the
 * namespace read, recording which lease calls it got.
 */
function registryWithBrokenNamespaceRead(calls: string[]): TopicRegistry {
  const lookup = {
    lookupTopic: async () => (calls.push('lookupTopic'), { instanceId: 'me', advertisedAddress: 'me:6650' }),
    acquireLease: async () => (calls.push('acquireLease'), {}),
    releaseLease: async () => (calls.push('releaseLease'), {}),
  };
  const admin = {
    getNamespace: async () => {
      throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'the metadata service is away');
    },
  };
  const options = {
    clients: { lookup, admin },
    session: { sessionId: 's1' },
    identity: { instanceId: 'me' },
    settings: resolveWriterSettings({}),
    logger: { info: () => undefined, warn: () => undefined },
  };
  const registry = new TopicRegistry(options as unknown as TopicRegistryOptions);
  registry.start();
  return registry;
}

describe('a topic load whose namespace read fails', () => {
  it('gives the lease it took up again', async () => {
    const calls: string[] = [];
    const registry = registryWithBrokenNamespaceRead(calls);
    try {
      expect((await refusal(registry.get(TOPIC))).code).toBe('UNAVAILABLE');
      expect(calls).toEqual(['lookupTopic', 'acquireLease', 'releaseLease']);
    } finally {
      registry.stop();
    }
  });

  it('keeps a lease handed over by a transfer: its source counts the topic as here, and the next request loads it', async () => {
    const calls: string[] = [];
    const registry = registryWithBrokenNamespaceRead(calls);
    try {
      expect((await refusal(registry.get(TOPIC, { leaseHandedOver: true }))).code).toBe('UNAVAILABLE');
      expect(calls).toEqual(['acquireLease']);
    } finally {
      registry.stop();
    }
  });
});

/** A promise settled from outside, so a test decides when a fake call answers. */
function gate<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

/**
 * A registry over fakes for a handed-over load: the take-up (AcquireLease) answers when the test says,
 * the namespace read at once, and the managed ledger factory records opens and closes (its ledger has
 * an empty deduplication cursor).
 */
function registryForHandOver(calls: string[], takeUp: Promise<object>): TopicRegistry {
  const opened = gate<void>();
  const ledger = {
    state: 'open',
    onEntriesAdopted: () => () => undefined,
    openCursor: async () => ({ getProperties: () => new Map(), readEntries: async () => [] }),
  };
  const lookup = {
    acquireLease: () => (calls.push('acquireLease'), takeUp),
    releaseLease: async () => (calls.push('releaseLease'), {}),
  };
  const factory = {
    open: async () => (calls.push('open'), opened.resolve(), ledger),
    closeLedger: async () => void calls.push('closeLedger'),
  };
  const options = {
    clients: { lookup, admin: { getNamespace: async () => ({ namespace: { policies: {} } }) } },
    session: { sessionId: 's1' },
    identity: { instanceId: 'me' },
    factory,
    settings: resolveWriterSettings({}),
    metrics: writerMetrics(new Registry()),
    bus: undefined,
    logger: { info: () => undefined, warn: () => undefined },
    now: Date.now,
  };
  const registry = new TopicRegistry(options as unknown as TopicRegistryOptions);
  registry.start();
  return Object.assign(registry, { opened: opened.promise });
}

describe('a topic load after a transfer handed its lease here', () => {
  it('opens the managed ledger while the lease is taken up, and serves only once the take-up answered', async () => {
    const calls: string[] = [];
    const takeUp = gate<object>();
    const registry = registryForHandOver(calls, takeUp.promise);
    try {
      let served = false;
      const loading = registry.get(TOPIC, { leaseHandedOver: true }).then((topic) => ((served = true), topic));
      await (registry as unknown as { opened: Promise<void> }).opened;
      expect(calls).toEqual(['acquireLease', 'open']);
      // Deduplication recovered, nothing left to wait for but the take-up: still not served.
      await new Promise((resolve) => setImmediate(resolve));
      expect(served).toBe(false);
      expect(registry.find(TOPIC)).toBeUndefined();
      takeUp.resolve({});
      expect((await loading).name).toBe(TOPIC);
      expect(registry.find(TOPIC)).toBeDefined();
    } finally {
      registry.stop();
    }
  });

  it('closes the managed ledger again when the take-up is refused after it opened, and releases only then', async () => {
    const calls: string[] = [];
    const takeUp = gate<object>();
    const registry = registryForHandOver(calls, takeUp.promise);
    try {
      const loading = refusal(registry.get(TOPIC, { leaseHandedOver: true }));
      await (registry as unknown as { opened: Promise<void> }).opened;
      // The source took the lease back (its LoadTopic timed out) before this owner took it up.
      takeUp.reject(
        new LedgerlineError('FAILED_PRECONDITION', MetadataServiceReason.LEASE_HELD, 'held', {
          details: { advertisedAddress: 'source:6650' },
        }),
      );
      const refused = await loading;
      expect([refused.code, refused.reason]).toEqual(['FAILED_PRECONDITION', 'NOT_OWNER']);
      expect(calls).toEqual(['acquireLease', 'open', 'closeLedger', 'releaseLease']);
      expect(registry.find(TOPIC)).toBeUndefined();
    } finally {
      registry.stop();
    }
  });
});
