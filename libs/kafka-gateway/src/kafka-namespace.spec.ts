import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import { SecurityReason } from '@ledgerline/security';
import { ensureKafkaNamespace } from './kafka-namespace.js';

const SETTINGS = { kafkaTenant: 'public', kafkaNamespace: 'default', kafkaAutoCreateTopics: true };
const silent = { info: () => undefined, warn: () => undefined };

/** ensureNamespace failing with `failures` in turn, then succeeding; counts its calls. */
function backendFailing(...failures: LedgerlineError[]) {
  const calls: unknown[] = [];
  return {
    calls,
    async ensureNamespace(...args: unknown[]): Promise<void> {
      calls.push(args);
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
    },
  };
}

const unreachable = () =>
  new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'no connection established');

describe('the Kafka namespace at start', () => {
  it('tries again while the metadata service cannot be reached, then creates it with auto-creation allowed', async () => {
    const backend = backendFailing(unreachable(), unreachable());
    expect(await ensureKafkaNamespace(backend, SETTINGS, silent, new AbortController().signal)).toBe(true);
    expect(backend.calls).toHaveLength(3);
    expect(backend.calls[0]).toEqual(['public', 'default', { allowAutoTopicCreation: true }, expect.anything()]);
  });

  it('stops at a refusal: an admin restricted it', async () => {
    const backend = backendFailing(
      new LedgerlineError('PERMISSION_DENIED', SecurityReason.TENANT_ADMIN_REQUIRED, 'no'),
      unreachable(),
    );
    expect(await ensureKafkaNamespace(backend, SETTINGS, silent, new AbortController().signal)).toBe(false);
    expect(backend.calls).toHaveLength(1);
  });

  it('stops trying once the gateway closes', async () => {
    const stop = new AbortController();
    const backend = backendFailing(...Array.from({ length: 100 }, unreachable));
    const ensuring = ensureKafkaNamespace(backend, SETTINGS, silent, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    expect(await ensuring).toBe(false);
    expect(backend.calls.length).toBeLessThan(100);
  });
});
