import { eventually, startNats, type ServerProcess } from '@ledgerline/testing';
import { take } from './testing/bus.conformance.js';
import { NatsBus } from './nats-bus.js';

describe('NatsBus outage', () => {
  let nats: ServerProcess;

  beforeAll(async () => {
    nats = await startNats();
  });

  afterAll(async () => {
    await nats.stop();
  });

  it('publishes without hanging or throwing while NATS is down, and receives again after it restarts', async () => {
    const options = { servers: nats.url, reconnectWaitMs: 100, pingIntervalMs: 500 };
    const publisher = await NatsBus.connect(options);
    const subscriber = await NatsBus.connect(options);
    const subscription = subscriber.subscribe('outage.>');
    await subscriber.flush();
    await publisher.publish('outage.before', Uint8Array.of(1));
    expect(await take(subscription, 1)).toHaveLength(1);

    await nats.kill();
    await eventually(() => !publisher.stats().connected);
    const dropsBefore = publisher.stats().publishDropped;
    await Promise.all(Array.from({ length: 100 }, () => publisher.publish('outage.during', Uint8Array.of(2))));
    await publisher.flush();
    expect(publisher.stats().publishDropped - dropsBefore).toBe(100);
    expect(publisher.stats().disconnects).toBeGreaterThanOrEqual(1);

    await nats.restart();
    await eventually(() => publisher.stats().connected && subscriber.stats().connected);
    // The client re-registers the subscription itself; publish until one message crosses, since the order of the
    // two reconnects is not ours to choose. One pending read is kept across tries.
    const arrival = subscription[Symbol.asyncIterator]().next();
    await eventually(
      async () => {
        await publisher.publish('outage.after', Uint8Array.of(3));
        await publisher.flush();
        return (await settledWithin(arrival, 100)) !== undefined;
      },
      { attempts: 100, intervalMs: 0 },
    );
    const received = await arrival;
    expect(received.done).toBe(false);
    expect(received.value?.data[0]).toBe(3);

    await publisher.close();
    await subscriber.close();
  });
});

// The promise's value when it settles within the time, else undefined; the promise stays usable either way.
async function settledWithin<T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  const value = await Promise.race([promise, timeout]);
  clearTimeout(timer);
  return value;
}
