import { LedgerlineError } from '@ledgerline/errors';
import { TopicName } from '@ledgerline/naming';
import { OwnerReason } from '@ledgerline/ownership';
import { RpcReason } from '@ledgerline/rpc';
import { refusal } from '@ledgerline/testing';
import { NamespacePolicies } from './namespace-policies.js';

/** An admin client whose GetNamespace answers from `policies` (or fails while `down`), counting reads. */
function admin(policies: Record<string, object>) {
  const state = { reads: 0, down: false };
  const client = {
    getNamespace: async ({ namespace }: { namespace: string }) => {
      state.reads++;
      await new Promise((resolve) => setImmediate(resolve));
      if (state.down) throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'away');
      return { namespace: { policies: policies[namespace] } };
    },
  };
  return { state, client: { admin: client } as never };
}

const topic = (name: string) => TopicName.parse(name);

describe('NamespacePolicies', () => {
  it('reads a namespace once for the loads that ask at once and within the TTL, and again after it', async () => {
    const { state, client } = admin({ 'acme/orders': { numberOfTopicBuckets: 4 } });
    let nowMs = 1_000_000;
    const policies = new NamespacePolicies(client, 1_000, { now: () => nowMs });
    const loads = ['a', 'b', 'c'].map((name) => policies.writable(topic(`persistent://acme/orders/${name}`)));
    expect((await Promise.all(loads)).map((each) => each?.numberOfTopicBuckets)).toEqual([4, 4, 4]);
    expect(state.reads).toBe(1);
    nowMs += 900;
    await policies.writable(topic('persistent://acme/orders/d'));
    expect(state.reads).toBe(1);
    nowMs += 1_200;
    await policies.writable(topic('persistent://acme/orders/e'));
    expect(state.reads).toBe(2);
  });

  it('keeps no failed read: the next load asks again', async () => {
    const { state, client } = admin({ 'acme/orders': {} });
    const policies = new NamespacePolicies(client, 60_000);
    state.down = true;
    expect((await refusal(policies.writable(topic('persistent://acme/orders/a')))).code).toBe('UNAVAILABLE');
    state.down = false;
    await expect(policies.writable(topic('persistent://acme/orders/a'))).resolves.toEqual({});
    expect(state.reads).toBe(2);
  });

  it('refuses a topic of a read-only namespace, naming the writer topic', async () => {
    const { client } = admin({ 'acme/readers': { writerNamespace: 'acme/orders' } });
    const refused = await refusal(new NamespacePolicies(client).writable(topic('persistent://acme/readers/t')));
    expect([refused.code, refused.reason]).toEqual(['FAILED_PRECONDITION', OwnerReason.READONLY_TOPIC]);
    expect(refused.details['writer_topic']).toBe('persistent://acme/orders/t');
  });
});
