// The test service's implementation and a loopback server for the adapter's tests.
import type { Server } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import type { CallContext, ServiceImpl } from '../method-types.js';
import { registerService, type RegisterServiceOptions } from '../register-service.js';
import { bindInsecure, createGrpcServer, type GrpcLimits } from '../server-options.js';
import { TestService, type EchoRequest } from './test-service.js';

/** What the handlers saw, so tests can check the server side of a call. */
export interface ServerObservations {
  /** Resolves with each call's context as soon as its handler starts. */
  started: Array<CallContext>;
  /** Contexts whose signal aborted while the handler waited. */
  aborted: Array<CallContext>;
  /** Requests a streaming handler received, in order. */
  received: string[];
}

/** Waits `ms`, or until `signal` aborts (then records the abort and rethrows its reason). */
function wait(ms: number, context: CallContext, seen: ServerObservations): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      context.signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      seen.aborted.push(context);
      reject(context.signal.reason);
    };
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function failIfAsked(request: EchoRequest): void {
  if (request.failReason === 'PLAIN_ERROR') throw new Error('a plain error');
  if (request.failReason !== '') {
    throw new LedgerlineError('FAILED_PRECONDITION', request.failReason, `asked to fail on ${request.text}`, {
      details: { text: request.text, kind: 'test' },
    });
  }
}

export function testServiceImpl(seen: ServerObservations): ServiceImpl<typeof TestService> {
  return {
    async echo(request, context) {
      seen.started.push(context);
      if (request.delayMs > 0) await wait(request.delayMs, context, seen);
      failIfAsked(request);
      return { text: request.text, index: request.padding.length };
    },
    async *repeat(request, context) {
      seen.started.push(context);
      for (let index = 0; index < request.count; index++) yield { text: request.text, index };
      if (request.delayMs > 0) await wait(request.delayMs, context, seen);
      failIfAsked(request);
    },
    async collect(requests, context) {
      seen.started.push(context);
      const texts: string[] = [];
      for await (const request of requests) {
        seen.received.push(request.text);
        failIfAsked(request);
        if (request.delayMs > 0) await wait(request.delayMs, context, seen);
        texts.push(request.text);
      }
      return { text: texts.join(','), index: texts.length };
    },
    async *chat(requests, context) {
      seen.started.push(context);
      let index = 0;
      for await (const request of requests) {
        seen.received.push(request.text);
        failIfAsked(request);
        if (request.delayMs > 0) await wait(request.delayMs, context, seen);
        yield { text: request.text.toUpperCase(), index: index++ };
      }
    },
  };
}

export interface TestServer {
  server: Server;
  address: string;
  seen: ServerObservations;
  stop(): Promise<void>;
}

export async function startTestServer(
  limits: GrpcLimits = {},
  options: RegisterServiceOptions = {},
  port = 0,
): Promise<TestServer> {
  const server = createGrpcServer(limits);
  const seen: ServerObservations = { started: [], aborted: [], received: [] };
  registerService(server, TestService, testServiceImpl(seen), options);
  const bound = await bindInsecure(server, '127.0.0.1', port);
  return {
    server,
    address: `127.0.0.1:${bound}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** An async iterable over `items`, for client-streaming and bidi calls. */
export async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** An async iterable the test feeds one item at a time, to prove a bidi call interleaves. */
export function pushable<T>(): {
  iterable: AsyncIterable<T>;
  push(item: T): void;
  end(): void;
  fail(error: Error): void;
} {
  const queue: Array<IteratorResult<T> | Error> = [];
  let wake: (() => void) | undefined;
  const enqueue = (entry: IteratorResult<T> | Error): void => {
    queue.push(entry);
    wake?.();
  };
  async function* iterate(): AsyncGenerator<T> {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const entry = queue.shift()!;
      if (entry instanceof Error) throw entry;
      if (entry.done === true) return;
      yield entry.value;
    }
  }
  return {
    iterable: iterate(),
    push: (item) => enqueue({ done: false, value: item }),
    end: () => enqueue({ done: true, value: undefined }),
    fail: (error) => enqueue(error),
  };
}
