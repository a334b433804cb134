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

  it('with connectInBackground, starts without a server, drops what it publishes, and receives once NATS is up', async () => {
    const port = await freePort();
    const told: unknown[] = [];
    const bus = await NatsBus.connect({
      servers: `nats://127.0.0.1:${port}`,
      connectTimeoutMs: 300,
      connectInBackground: true,
      onConnectingInBackground: (cause) => told.push(cause),
    });
    expect(told).toEqual([expect.objectContaining({ reason: 'BUS_UNAVAILABLE' })]);
    expect(bus.stats().connected).toBe(false);
    const subscription = bus.subscribe('late.bus');
    await bus.publish('late.bus', new Uint8Array([1]));
    expect(bus.stats().publishDropped).toBe(1);
    const server = await startNats(port);
    try {
      const deadline = Date.now() + 20_000;
      while (!bus.stats().connected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(bus.stats().connected).toBe(true);
      await bus.flush();
      await bus.publish('late.bus', new Uint8Array([2]));
      for await (const message of subscription) {
        // The message published while disconnected was dropped, never delivered late.
        expect([...message.data]).toEqual([2]);
        break;
      }
      await bus.close();
    } finally {
      await server.stop();
    }
  });

  it('with connectInBackground, closes while it is still connecting and stops trying', async () => {
    const bus = await NatsBus.connect({
      servers: `nats://127.0.0.1:${await freePort()}`,
      connectTimeoutMs: 200,
      reconnectWaitMs: 100,
      connectInBackground: true,
    });
    bus.subscribe('never.connected');
    // Into the background tries, each as long as connectTimeoutMs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await bus.close();
    await expect(bus.publish('never.connected', new Uint8Array([1]))).rejects.toMatchObject({ reason: 'BUS_CLOSED' });
    // The leak check of the test environment fails this file if a connect attempt or its timer outlives close.
    await new Promise((resolve) => setTimeout(resolve, 500));
  });

  it('rejects a configuration without servers', async () => {
    await expect(createBus({ kind: 'nats', servers: [] })).rejects.toMatchObject({ reason: 'INVALID_CONFIG' });
    await expect(createBus({ kind: 'carrier-pigeon' } as never)).rejects.toMatchObject({ reason: 'INVALID_CONFIG' });
  });
});
