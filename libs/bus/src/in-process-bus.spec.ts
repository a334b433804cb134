import { busConformance } from './testing/bus.conformance.js';
import { InProcessBus } from './in-process-bus.js';

busConformance({
  name: 'InProcessBus',
  pair: async () => {
    const bus = new InProcessBus();
    return { publisher: bus, subscriber: bus };
  },
});

describe('InProcessBus limits', () => {
  it('refuses subscriptions beyond its bound and accepts them again after unsubscribe', async () => {
    const bus = new InProcessBus({ maxSubscriptions: 2 });
    const first = bus.subscribe('a.b');
    bus.subscribe('a.*');
    expect(() => bus.subscribe('a.>')).toThrow(expect.objectContaining({ reason: 'TOO_MANY_SUBSCRIPTIONS' }));
    first.unsubscribe();
    expect(bus.subscribe('a.>').pattern).toBe('a.>');
    await bus.close();
  });
});
