import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from '@ledgerline/rpc';
import { ServiceReason } from './client-reason.js';
import { rerouteAfter } from './reconnect.js';
import type { ServiceConnections } from './service-connections.js';
import { TopicLookup } from './topic-lookup.js';

const TOPIC = 'persistent://t/ns/cut';

/** A metadata service that names `owners` in turn and records every LookupTopic request. */
function lookupAnswering(owners: string[]): { lookup: TopicLookup; requests: Record<string, unknown>[] } {
  const requests: Record<string, unknown>[] = [];
  const connections = {
    to: () => ({
      lookup: {
        lookupTopic: async (request: Record<string, unknown>) => {
          requests.push(request);
          return { advertisedAddress: owners[Math.min(requests.length, owners.length) - 1], redirectTopic: '' };
        },
      },
    }),
    callOptions: () => ({}),
  } as unknown as ServiceConnections;
  return { lookup: new TopicLookup(connections, 'metadata:6650', '', 1_000), requests };
}

describe('TopicLookup after an owner could not be reached', () => {
  it('looks up afresh naming the address that failed, once', async () => {
    const { lookup, requests } = lookupAnswering(['a:6650', 'b:6650', 'b:6650']);
    expect((await lookup.route(TOPIC)).address).toBe('a:6650');
    const cut = new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'keepalive timeout');
    expect(rerouteAfter(cut, TOPIC, lookup)).toBe(true);
    expect((await lookup.route(TOPIC)).address).toBe('b:6650');
    // Another route failure that is not the connection's asks afresh, naming nothing.
    const unloaded = new LedgerlineError('UNAVAILABLE', ServiceReason.TOPIC_UNLOADED, 'unloaded');
    expect(rerouteAfter(unloaded, TOPIC, lookup)).toBe(true);
    await lookup.route(TOPIC);
    expect(requests.map((request) => request['unreachableAddress'])).toEqual(['', 'a:6650', '']);
  });

  it('names the owner a NOT_OWNER taught it, when that one cannot be reached', async () => {
    const { lookup, requests } = lookupAnswering(['c:6650']);
    lookup.learn(TOPIC, 'b:6650');
    lookup.unreachableOwner(TOPIC);
    await lookup.route(TOPIC);
    expect(requests.map((request) => request['unreachableAddress'])).toEqual(['b:6650']);
  });

  it('names the owner a NOT_OWNER taught it, not a lookup answer that arrived after it', async () => {
    const requests: Record<string, unknown>[] = [];
    let answerFirst: (address: string) => void = () => undefined;
    const connections = {
      to: () => ({
        lookup: {
          lookupTopic: (request: Record<string, unknown>) => {
            requests.push(request);
            if (requests.length > 1) return Promise.resolve({ advertisedAddress: 'c:6650', redirectTopic: '' });
            return new Promise(
              (resolve) => (answerFirst = (address) => resolve({ advertisedAddress: address, redirectTopic: '' })),
            );
          },
        },
      }),
      callOptions: () => ({}),
    } as unknown as ServiceConnections;
    const lookup = new TopicLookup(connections, 'metadata:6650', '', 1_000);
    const slow = lookup.route(TOPIC);
    lookup.learn(TOPIC, 'b:6650');
    answerFirst('a:6650');
    await slow;
    lookup.unreachableOwner(TOPIC);
    await lookup.route(TOPIC);
    expect(requests.map((request) => request['unreachableAddress'])).toEqual(['', 'b:6650']);
  });
});
