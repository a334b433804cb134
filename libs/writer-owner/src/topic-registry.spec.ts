import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import { refusal } from '@ledgerline/testing';
import { resolveWriterSettings } from './config.js';
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
