import { eventually } from './eventually.js';

describe('eventually', () => {
  it('resolves once the condition holds, sync or async', async () => {
    let checks = 0;
    await eventually(() => ++checks === 3, { intervalMs: 1 });
    expect(checks).toBe(3);
    let asyncChecks = 0;
    await eventually(async () => ++asyncChecks === 2, { intervalMs: 1 });
    expect(asyncChecks).toBe(2);
  });

  it('fails naming what it waited for once the attempts run out', async () => {
    let checks = 0;
    const waited = eventually(() => (checks++, false), { attempts: 4, intervalMs: 1, description: 'the reconnect' });
    await expect(waited).rejects.toThrow('the reconnect did not hold after 4 checks 1 ms apart');
    expect(checks).toBe(4);
  });

  it('propagates an error the condition throws', async () => {
    await expect(
      eventually(() => {
        throw new Error('broken check');
      }),
    ).rejects.toThrow('broken check');
  });
});
