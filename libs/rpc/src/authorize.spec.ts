import { LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient } from './create-client.js';
import type { CallContext } from './method-types.js';
import { fromArray, startTestServer, TestService, type TestServer } from './testing/index.js';

const REFUSED = 'REFUSED_FOR_TEST';

/** Refuses any request whose text is 'forbidden', as an authorization check would. */
function authorize(seenBy: string[]) {
  return (context: CallContext, request: unknown): void => {
    seenBy.push(context.method);
    if ((request as { text?: string }).text === 'forbidden') {
      throw new LedgerlineError('PERMISSION_DENIED', REFUSED, 'not for you');
    }
  };
}

async function failure(call: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await call;
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('the call succeeded');
}

describe('the authorize hook', () => {
  let server: TestServer;
  const checked: string[] = [];
  let client: ReturnType<typeof createClient<typeof TestService>>;

  beforeAll(async () => {
    server = await startTestServer({}, { authorize: authorize(checked) });
    client = createClient(TestService, server.address, { defaultDeadlineMs: 5_000 });
  });
  afterAll(async () => {
    closeClient(client);
    await server.stop();
  });

  it('refuses a unary call before its handler runs, with the refusal reaching the client unchanged', async () => {
    const started = server.seen.started.length;
    const error = await failure(client.echo({ text: 'forbidden' }));
    expect(error).toMatchObject({ code: 'PERMISSION_DENIED', reason: REFUSED, message: 'not for you' });
    expect(server.seen.started.length).toBe(started);
    await expect(client.echo({ text: 'fine' })).resolves.toMatchObject({ text: 'fine' });
    expect(checked).toContain('/ledgerline.test.v1.TestService/Echo');
  });

  it('checks every message of a stream, so a refused one never reaches the handler', async () => {
    const error = await failure(client.collect(fromArray([{ text: 'a' }, { text: 'forbidden' }, { text: 'c' }])));
    expect(error.reason).toBe(REFUSED);
    expect(server.seen.received).toContain('a');
    expect(server.seen.received).not.toContain('forbidden');
    const replies: string[] = [];
    const chat = (async () => {
      for await (const reply of client.chat(fromArray([{ text: 'x' }, { text: 'forbidden' }])))
        replies.push(reply.text);
    })();
    expect((await failure(chat)).reason).toBe(REFUSED);
    expect(replies).toEqual(['X']);
  });
});
