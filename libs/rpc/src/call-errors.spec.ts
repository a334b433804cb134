import { Client as GrpcClient, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { closeClient, createClient } from './create-client.js';
import { LedgerlineError } from '@ledgerline/errors';
import type { CallEndInfo } from './server-handlers.js';
import { TestService } from './testing/test-service.js';
import { eventually, freePort } from '@ledgerline/testing';
import { fromArray, pushable, startTestServer, type TestServer } from './testing/test-server.js';

/** Sends raw request messages on a client stream, bypassing serialization. */
function sendRawStream(address: string, path: string, messages: Buffer[]): Promise<ServiceError | Buffer> {
  const raw = new GrpcClient(address, credentials.createInsecure());
  return new Promise((resolve) => {
    const call = raw.makeClientStreamRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      new Metadata(),
      {},
      (error, response) => {
        raw.close();
        resolve(error ?? response!);
      },
    );
    for (const message of messages) call.write(message);
    call.end();
  });
}

/** Sends raw bytes as a request, bypassing serialization, as a broken or hostile client would. */
function sendRawUnary(address: string, path: string, bytes: Buffer): Promise<ServiceError | Buffer> {
  const raw = new GrpcClient(address, credentials.createInsecure());
  return new Promise((resolve) => {
    raw.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      new Metadata(),
      {},
      (error, response) => {
        raw.close();
        resolve(error ?? response!);
      },
    );
  });
}

async function failure(promise: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LedgerlineError);
    return error as LedgerlineError;
  }
  throw new Error('the call succeeded but was expected to fail');
}

async function drain(iterable: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _item of iterable) count++;
  return count;
}

describe('errors over the wire', () => {
  let server: TestServer;
  let client: ReturnType<typeof createClient<typeof TestService>>;
  const ended: CallEndInfo[] = [];

  beforeAll(async () => {
    server = await startTestServer({ maxMessageSizeBytes: 64 * 1024 }, { onCallEnd: (info) => ended.push(info) });
    client = createClient(TestService, server.address, { maxMessageSizeBytes: 1024 * 1024 });
  });

  afterAll(async () => {
    closeClient(client);
    await server.stop();
  });

  it('rebuilds a handler error with its code, reason and details on a unary call', async () => {
    const error = await failure(client.echo({ text: 'u', failReason: 'TOPIC_READONLY' }));
    expect(error.code).toBe('FAILED_PRECONDITION');
    expect(error.reason).toBe('TOPIC_READONLY');
    expect(error.message).toBe('asked to fail on u');
    expect(error.details).toEqual({ text: 'u', kind: 'test' });
    expect(ended.at(-1)).toMatchObject({ method: '/ledgerline.test.v1.TestService/Echo', code: 'FAILED_PRECONDITION' });
  });

  it('fails a server stream after the messages it already sent', async () => {
    const received: number[] = [];
    const error = await failure(
      (async () => {
        for await (const response of client.repeat({ text: 's', count: 3, failReason: 'LEDGER_FENCED' })) {
          received.push(response.index);
        }
      })(),
    );
    expect(received).toEqual([0, 1, 2]);
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'LEDGER_FENCED', details: { text: 's' } });
  });

  it('fails a client stream with the error of the request that broke it', async () => {
    const requests = [{ text: 'ok' }, { text: 'bad', failReason: 'BAD_ENTRY' }, { text: 'never' }];
    const error = await failure(client.collect(fromArray(requests)));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'BAD_ENTRY', details: { text: 'bad' } });
  });

  it('fails a bidi stream mid-way with the handler error', async () => {
    const replies: string[] = [];
    const error = await failure(
      (async () => {
        const requests = [{ text: 'a' }, { text: 'b', failReason: 'ACK_REJECTED' }, { text: 'c' }];
        for await (const reply of client.chat(fromArray(requests))) replies.push(reply.text);
      })(),
    );
    expect(replies).toEqual(['A']);
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'ACK_REJECTED' });
  });

  it('turns a plain Error thrown by a handler into INTERNAL', async () => {
    const error = await failure(client.echo({ text: 'p', failReason: 'PLAIN_ERROR' }));
    expect(error.code).toBe('INTERNAL');
    expect(error.reason).toBe('INTERNAL_ERROR');
    expect(error.message).toBe('a plain error');
  });

  it('fails with DEADLINE_EXCEEDED and aborts the handler signal', async () => {
    const error = await failure(client.echo({ text: 'slow', delayMs: 30_000 }, { deadlineMs: 50 }));
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(error.reason).toBe('DEADLINE_EXCEEDED');
    expect(error.retryable).toBe(true);
    const context = server.seen.started.at(-1)!;
    await eventually(() => server.seen.aborted.includes(context));
  });

  it('applies the client default deadline to unary calls', async () => {
    const hasty = createClient(TestService, server.address, { defaultDeadlineMs: 50 });
    try {
      const error = await failure(hasty.echo({ text: 'slow', delayMs: 30_000 }));
      expect(error.reason).toBe('DEADLINE_EXCEEDED');
    } finally {
      closeClient(hasty);
    }
  });

  it('cancels a unary call when the caller aborts, and the handler sees it', async () => {
    const controller = new AbortController();
    const before = server.seen.started.length;
    const pending = client.echo({ text: 'wait', delayMs: 30_000 }, { signal: controller.signal });
    await eventually(() => server.seen.started.length > before);
    const context = server.seen.started.at(-1)!;
    controller.abort();
    const error = await failure(pending);
    expect(error).toMatchObject({ code: 'CANCELLED', reason: 'CANCELLED' });
    await eventually(() => context.signal.aborted && server.seen.aborted.includes(context));
  });

  it('cancels a bidi call when the caller aborts', async () => {
    const controller = new AbortController();
    const outbox = pushable<{ text: string; delayMs?: number }>();
    const before = server.seen.started.length;
    const reading = failure(drain(client.chat(outbox.iterable, { signal: controller.signal })));
    outbox.push({ text: 'hang', delayMs: 30_000 });
    await eventually(() => server.seen.started.length > before && server.seen.received.includes('hang'));
    const context = server.seen.started.at(-1)!;
    controller.abort();
    expect(await reading).toMatchObject({ code: 'CANCELLED', reason: 'CANCELLED' });
    await eventually(() => context.signal.aborted);
    outbox.end();
  });

  it('refuses to start a call whose signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = server.seen.started.length;
    const error = await failure(client.echo({ text: 'x' }, { signal: controller.signal }));
    expect(error.code).toBe('CANCELLED');
    expect(server.seen.started.length).toBe(before);
  });

  it('fails a client stream with the error its request iterable threw, and cancels the call', async () => {
    async function* broken(): AsyncGenerator<{ text: string }> {
      yield { text: 'first' };
      throw new LedgerlineError('INVALID_ARGUMENT', 'SOURCE_BROKEN', 'the producer failed');
    }
    const error = await failure(client.collect(broken()));
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'SOURCE_BROKEN' });
  });

  it('answers garbage request bytes with INVALID_ARGUMENT and stays healthy', async () => {
    const answer = await sendRawUnary(
      server.address,
      '/ledgerline.test.v1.TestService/Echo',
      Buffer.from([0xff, 0xff]),
    );
    expect(answer).toBeInstanceOf(Error);
    const rebuilt = (await import('./error-wire.js')).errorFromServiceError(answer as ServiceError);
    expect(rebuilt.code).toBe('INVALID_ARGUMENT');
    expect(rebuilt.reason).toBe('MALFORMED_REQUEST');
    expect(rebuilt.message).toContain('ledgerline.test.v1.EchoRequest');
    expect((await client.echo({ text: 'still here' })).text).toBe('still here');
  });

  it('answers garbage bytes inside a client stream with INVALID_ARGUMENT', async () => {
    const { create, toBinary } = await import('@bufbuild/protobuf');
    const { EchoRequestSchema } = await import('./testing/test-service.js');
    const good = Buffer.from(toBinary(EchoRequestSchema, create(EchoRequestSchema, { text: 'fine' })));
    const answer = await sendRawStream(server.address, '/ledgerline.test.v1.TestService/Collect', [
      good,
      Buffer.from([0x0a, 0x7f, 0x01]),
      good,
    ]);
    const rebuilt = (await import('./error-wire.js')).errorFromServiceError(answer as ServiceError);
    expect(rebuilt).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'MALFORMED_REQUEST' });
    expect(server.seen.received.at(-1)).toBe('fine');
  });

  it('answers a request over the size limit with RESOURCE_EXHAUSTED and stays healthy', async () => {
    const error = await failure(client.echo({ text: 'big', padding: new Uint8Array(128 * 1024) }));
    expect(error).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'MESSAGE_TOO_LARGE', retryable: false });
    expect((await client.echo({ text: 'small', padding: new Uint8Array(1024) })).index).toBe(1024);
  });

  it('names a server that is not there TRANSPORT_UNAVAILABLE', async () => {
    const nowhere = createClient(TestService, `127.0.0.1:${await freePort()}`);
    try {
      const error = await failure(nowhere.echo({ text: 'x' }, { deadlineMs: 5000 }));
      expect(error).toMatchObject({ code: 'UNAVAILABLE', reason: 'TRANSPORT_UNAVAILABLE', retryable: true });
    } finally {
      closeClient(nowhere);
    }
  });

  it('bounds what an error carries so the trailer always fits', async () => {
    const { errorToStatus, errorFromServiceError, MAX_ERROR_MESSAGE_CHARS, MAX_ERROR_DETAILS } =
      await import('./error-wire.js');
    const details = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'.repeat(10_000)]));
    const status = errorToStatus(new LedgerlineError('ABORTED', 'BIG', 'm'.repeat(100_000), { details }));
    const rebuilt = errorFromServiceError(Object.assign(new Error(status.details), status) as ServiceError);
    expect(rebuilt.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(Object.keys(rebuilt.details)).toHaveLength(MAX_ERROR_DETAILS);
    expect(rebuilt.reason).toBe('BIG');
  });
});
