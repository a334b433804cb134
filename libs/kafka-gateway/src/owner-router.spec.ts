import type { Server } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { CursorsService, LookupService, TopicsService } from '@ledgerline/proto';
import {
  bindInsecure,
  createGrpcServer,
  registerService,
  RpcReason,
  type Client,
  type ServiceImpl,
} from '@ledgerline/rpc';
import { ANONYMOUS, OwnerRouter } from './owner-router.js';

const LOCAL_ADDRESS = '127.0.0.1:1';

/** A metadata service whose lookups name the local owner for every topic. */
async function startLookup(): Promise<{ server: Server; address: string }> {
  const server = createGrpcServer({});
  const lookupTopic = async () => ({ advertisedAddress: LOCAL_ADDRESS });
  // Every other method of the service answers as one this spec never calls.
  const lookup = new Proxy({} as ServiceImpl<typeof LookupService>, {
    get: (_target, name) =>
      name === 'lookupTopic'
        ? lookupTopic
        : async () => {
            throw new LedgerlineError('UNIMPLEMENTED', RpcReason.HANDLER_MISSING, `${String(name)} is not faked`);
          },
  });
  registerService(server, LookupService, lookup);
  const port = await bindInsecure(server, '127.0.0.1', 0);
  return { server, address: `127.0.0.1:${port}` };
}

describe('the owner router with an owner in its own process', () => {
  let lookup: { server: Server; address: string };
  beforeAll(async () => {
    lookup = await startLookup();
  });
  afterAll(() => lookup?.server.forceShutdown());

  it('calls its TopicsService and CursorsService in process, never over a channel to its address', async () => {
    const calls: string[] = [];
    const topics = {
      getTopicStats: async () => {
        calls.push('topics');
        return {};
      },
    } as unknown as Client<typeof TopicsService>;
    const cursors = {
      getCursor: async () => {
        calls.push('cursors');
        return {};
      },
    } as unknown as Client<typeof CursorsService>;
    // Nothing listens at LOCAL_ADDRESS: a call sent over a channel there would fail UNAVAILABLE.
    const router = new OwnerRouter(lookup.address, {}, 5_000, { address: LOCAL_ADDRESS, topics, cursors });
    try {
      await router.withOwner('public/default/orders', ANONYMOUS, (owner) =>
        owner.cursors.getCursor({ topic: 'public/default/orders', subscription: 'group' }),
      );
      await router.withOwner('public/default/orders', ANONYMOUS, (owner) =>
        owner.topics.getTopicStats({ topic: 'public/default/orders' }),
      );
      expect(calls).toEqual(['cursors', 'topics']);
    } finally {
      router.close();
    }
  });
});
