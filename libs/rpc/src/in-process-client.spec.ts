import { Metadata } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient } from './create-client.js';
import { createInProcessClient, IN_PROCESS_PEER } from './in-process-client.js';
import type { Client } from './method-types.js';
import type { CallEndInfo, HandlerHooks } from './server-handlers.js';
import {
  fromArray,
  startTestServer,
  testServiceImpl,
  type ServerObservations,
  type TestServer,
} from './testing/index.js';
import { TestService } from './testing/test-service.js';

/** The reason the test hook refuses with (a reason the security package would own). */
const NOT_ALLOWED = 'NOT_ALLOWED';

/** Refuses any request whose text is 'forbidden', as a server's authorize hook would. */
function refusingHooks(ended: CallEndInfo[], started: string[]): HandlerHooks {
  return {
    authorize: (context, request) => {
      if ((request as { text: string }).text === 'forbidden') {
        const who = context.metadata.get('authorization')[0] ?? 'nobody';
        throw new LedgerlineError('PERMISSION_DENIED', NOT_ALLOWED, `${String(who)} may not send that`);
      }
    },
    onCallStart: (method) => started.push(method),
    onCallEnd: (info) => ended.push(info),
  };
}

async function outcome<T>(call: () => Promise<T>): Promise<unknown> {
  try {
    return { ok: await call() };
  } catch (error) {
    const { code, reason, details } = error as LedgerlineError;
    return { code, reason, details };
  }
}

async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

describe('an in-process client', () => {
  let server: TestServer;
  let remote: Client<typeof TestService>;
  let local: Client<typeof TestService>;
  let seen: ServerObservations;
  const ended: CallEndInfo[] = [];
  const started: string[] = [];

  beforeEach(async () => {
    ended.length = 0;
    started.length = 0;
    const hooks = refusingHooks(ended, started);
    server = await startTestServer({}, hooks);
    remote = createClient(TestService, server.address);
    seen = { started: [], aborted: [], received: [] };
    local = createInProcessClient(TestService, testServiceImpl(seen), hooks);
  });
  afterEach(async () => {
    closeClient(remote);
    await server.stop();
  });

  // Every kind of call, answered and refused, gives the in-process caller exactly what a gRPC caller gets.
  const calls: Array<[string, (client: Client<typeof TestService>) => Promise<unknown>]> = [
    ['unary', (c) => c.echo({ text: 'hi', padding: new Uint8Array(3) })],
    ['unary failing', (c) => c.echo({ text: 'x', failReason: 'NOPE' })],
    ['unary failing with a plain error', (c) => c.echo({ text: 'x', failReason: 'PLAIN_ERROR' })],
    ['unary refused by authorize', (c) => c.echo({ text: 'forbidden' })],
    ['server streaming', (c) => drain(c.repeat({ text: 'r', count: 3 }))],
    ['server streaming failing after answers', (c) => drain(c.repeat({ text: 'r', count: 2, failReason: 'LATE' }))],
    ['client streaming', (c) => c.collect(fromArray([{ text: 'a' }, { text: 'b' }]))],
    ['client streaming, second request refused', (c) => c.collect(fromArray([{ text: 'a' }, { text: 'forbidden' }]))],
    ['bidi', (c) => drain(c.chat(fromArray([{ text: 'a' }, { text: 'b' }])))],
    ['bidi failing', (c) => drain(c.chat(fromArray([{ text: 'a' }, { text: 'b', failReason: 'BAD_B' }])))],
  ];
  it.each(calls)('%s: answers or refuses as over gRPC', async (_name, call) => {
    const overGrpc = await outcome(() => call(remote));
    const inProcess = await outcome(() => call(local));
    expect(inProcess).toEqual(overGrpc);
  });

  it('hands the handler the caller metadata and its own peer, and reports each call start and end to the hooks', async () => {
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer t1');
    await expect(local.echo({ text: 'forbidden' }, { metadata })).rejects.toMatchObject({
      reason: NOT_ALLOWED,
      message: expect.stringContaining('Bearer t1'),
    });
    await local.echo({ text: 'ok' }, { metadata });
    expect(seen.started[0]!.peer).toBe(IN_PROCESS_PEER);
    expect(seen.started[0]!.metadata.get('authorization')).toEqual(['Bearer t1']);
    expect(started).toEqual(['/ledgerline.test.v1.TestService/Echo', '/ledgerline.test.v1.TestService/Echo']);
    expect(ended.map((info) => info.code)).toEqual(['PERMISSION_DENIED', 'OK']);
  });

  it('fails DEADLINE_EXCEEDED at the deadline and aborts the handler', async () => {
    await expect(local.echo({ text: 'slow', delayMs: 10_000 }, { deadlineMs: 50 })).rejects.toMatchObject({
      code: 'DEADLINE_EXCEEDED',
      reason: 'DEADLINE_EXCEEDED',
    });
    expect(seen.aborted).toHaveLength(1);
    expect(ended.at(-1)?.code).toBe('CANCELLED');
  });

  it("fails CANCELLED when the caller's signal aborts, and the handler sees it", async () => {
    const abort = new AbortController();
    const stream = local.repeat({ text: 'r', count: 1, delayMs: 10_000 }, { signal: abort.signal });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const response of stream) {
        got.push(response);
        abort.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'CANCELLED', reason: 'CANCELLED' });
    expect(got).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.aborted).toHaveLength(1);
  });

  it('refuses a call whose signal is already aborted without running the handler', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(local.echo({ text: 'never' }, { signal: abort.signal })).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('refuses to build a client for an implementation that lacks a handler', () => {
    const { chat: _missing, ...partial } = testServiceImpl(seen);
    expect(() => createInProcessClient(TestService, partial as never)).toThrow(/no handler for Chat/);
  });
});
