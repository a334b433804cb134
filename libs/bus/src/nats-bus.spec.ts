import { freePort, sharedServers, startNats } from '@ledgerline/testing';
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

  it('keeps trying within connectTimeoutMs, so a service whose NATS starts a moment after it (pods coming up) connects', async () => {
    const port = await freePort();
    const connecting = NatsBus.connect({ servers: `nats://127.0.0.1:${port}`, connectTimeoutMs: 20_000 });
    // Refused at first: nothing listens on the port yet.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const server = await startNats(port);
    try {
      const bus = await connecting;
      const subscription = bus.subscribe('late.start');
      await bus.flush();
      await bus.publish('late.start', new Uint8Array([7]));
      for await (const message of subscription) {
        expect([...message.data]).toEqual([7]);
        break;
      }
      await bus.close();
    } finally {
      await server.stop();
    }
  });

  it('rejects a configuration without servers', async () => {
    await expect(createBus({ kind: 'nats', servers: [] })).rejects.toMatchObject({ reason: 'INVALID_CONFIG' });
    await expect(createBus({ kind: 'carrier-pigeon' } as never)).rejects.toMatchObject({ reason: 'INVALID_CONFIG' });
  });
});
