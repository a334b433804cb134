import { Registry } from 'prom-client';
import { BACKGROUND_ERRORS_METRIC, BackgroundErrorKind, backgroundErrors } from './storage-errors.js';

async function count(registry: Registry, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(BACKGROUND_ERRORS_METRIC)!.get();
  const sample = metric.values.find((value) => Object.entries(labels).every(([k, v]) => value.labels[k] === v));
  return sample?.value ?? 0;
}

describe('backgroundErrors', () => {
  it('counts each report by store and kind and logs it at warn', async () => {
    const registry = new Registry();
    const lines: { details: object; message: string }[] = [];
    const logger = { warn: (details: object, message: string) => lines.push({ details, message }) };
    const errors = backgroundErrors('metadata-store', { registry, logger });
    const failure = new Error('sweep failed');
    errors.report(BackgroundErrorKind.SESSION_SWEEP, failure);
    errors.report(BackgroundErrorKind.SESSION_SWEEP, failure);
    expect(await count(registry, { store: 'metadata-store', kind: 'session_sweep' })).toBe(2);
    expect(lines).toHaveLength(2);
    expect(lines[0]!.details).toEqual({ store: 'metadata-store', kind: 'session_sweep', err: failure });
  });

  it('shares one counter between the reporters of one registry', async () => {
    const registry = new Registry();
    backgroundErrors('ledger-store', { registry }).report(BackgroundErrorKind.REDIS_CONNECTION, new Error('x'));
    backgroundErrors('metadata-store', { registry }).report(BackgroundErrorKind.REDIS_CONNECTION, new Error('y'));
    expect(await count(registry, { store: 'ledger-store' })).toBe(1);
    expect(await count(registry, { store: 'metadata-store' })).toBe(1);
  });
});
