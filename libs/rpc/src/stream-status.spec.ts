import { LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient } from './create-client.js';
import type { ServiceImpl } from './method-types.js';
import { registerService } from './register-service.js';
import { bindInsecure, createGrpcServer } from './server-options.js';
import { pushable, testServiceImpl } from './testing/test-server.js';
import { TestService } from './testing/test-service.js';

/** Rejects when `promise` has not settled within `ms`, so a lost status fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no status within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The shape of an owner's Consume stream: requests are read in the background
// (a read is pending all along), responses are written, and the handler fails
// while the transport still holds responses the client has not read.
const LARGE_TEXT = 'x'.repeat(256 * 1024);
// A reason made up for this test: the adapter must carry any reason a handler gives.
const SPEC_REASON = { MOVED: 'MOVED' } as const;

describe('a bidi stream whose handler fails while responses are still being written', () => {
  const server = createGrpcServer();
  let address = '';

  beforeAll(async () => {
    const impl: ServiceImpl<typeof TestService> = {
      ...testServiceImpl({ started: [], aborted: [], received: [] }),
      async *chat(requests) {
        const iterator = requests[Symbol.asyncIterator]();
        const reading = (async () => {
          while ((await iterator.next()).done !== true);
        })();
        reading.catch(() => undefined);
        for (let index = 0; index < 4; index++) yield { text: LARGE_TEXT, index };
        throw new LedgerlineError('FAILED_PRECONDITION', SPEC_REASON.MOVED, 'the topic moved');
      },
    };
    registerService(server, TestService, impl);
    address = `127.0.0.1:${await bindInsecure(server, '127.0.0.1', 0)}`;
  });

  afterAll(() => server.forceShutdown());

  it('delivers every response, then the status, to a client that reads late', async () => {
    const client = createClient(TestService, address);
    const outbox = pushable<{ text: string }>();
    try {
      const replies = client.chat(outbox.iterable)[Symbol.asyncIterator]();
      outbox.push({ text: 'subscribe' });
      // Not reading yet: the responses fill the HTTP/2 window and one write stays pending when the handler fails.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const indexes: number[] = [];
      const failure = await within(
        (async () => {
          for (;;) {
            const reply = await replies.next();
            if (reply.done === true) return undefined;
            indexes.push(reply.value.index);
          }
        })().catch((error: unknown) => error),
        10_000,
      );
      expect(indexes).toEqual([0, 1, 2, 3]);
      expect(failure).toMatchObject({ code: 'FAILED_PRECONDITION', reason: SPEC_REASON.MOVED });
    } finally {
      outbox.end();
      closeClient(client);
    }
  });
});
