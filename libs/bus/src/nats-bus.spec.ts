import { sharedServers } from '@ledgerline/testing';
import { busConformance } from './testing/bus.conformance.js';
import { createBus } from './create-bus.js';
import { NatsBus } from './nats-bus.js';

busConformance({
  name: 'NatsBus',
  pair: async () => {
    const { natsUrl } = sharedServers();
    const publisher = await NatsBus.connect({ servers: natsUrl, name: 'bus-conformance-publisher' });
    const subscriber = await createBus({ kind: 'nats', servers: natsUrl, name: 'bus-conformance-subscriber' });
    return { publisher, subscriber };
  },
});

describe('NatsBus connection', () => {
  it('fails with UNAVAILABLE when no server answers', async () => {
    await expect(NatsBus.connect({ servers: 'nats://127.0.0.1:1', connectTimeoutMs: 500 })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'BUS_UNAVAILABLE',
    });
  });

  it('rejects a configuration without servers', async () => {
    await expect(createBus({ kind: 'nats', servers: [] })).rejects.toMatchObject({ reason: 'BAD_BUS_CONFIG' });
    await expect(createBus({ kind: 'carrier-pigeon' } as never)).rejects.toMatchObject({ reason: 'BAD_BUS_CONFIG' });
  });
});
