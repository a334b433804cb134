import { InFlight } from './in-flight.js';

describe('InFlight', () => {
  it('is idle at once when nothing is under way', async () => {
    const inFlight = new InFlight();
    await expect(inFlight.whenIdle()).resolves.toBeUndefined();
    expect(inFlight.size).toBe(0);
  });

  it('wakes its waiters only once every slot is given back, counting a slot given back twice once', async () => {
    const inFlight = new InFlight();
    const first = inFlight.begin();
    const second = inFlight.begin();
    let idle = false;
    const idled = inFlight.whenIdle().then(() => {
      idle = true;
    });
    first();
    first();
    await Promise.resolve();
    expect(inFlight.size).toBe(1);
    expect(idle).toBe(false);
    second();
    await idled;
    expect(idle).toBe(true);
    expect(inFlight.size).toBe(0);
  });

  it('waits for slots taken while it waited', async () => {
    const inFlight = new InFlight();
    const first = inFlight.begin();
    let idle = false;
    const idled = inFlight.whenIdle().then(() => {
      idle = true;
    });
    const second = inFlight.begin();
    first();
    await Promise.resolve();
    expect(idle).toBe(false);
    second();
    await idled;
    expect(idle).toBe(true);
  });
});
