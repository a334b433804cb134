import { create, fromBinary, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { Metadata } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { EncodedMessage } from './encoded-message.js';
import { RpcReason } from './errors.js';
import type { CallOptions, Client, ServiceImpl } from './method-types.js';
import { boundHandler } from './register-service.js';
import { authorizedRequests, startCall, type CallScope, type HandlerHooks } from './server-handlers.js';

/** The peer an in-process call reports (CallContext.peer). */
export const IN_PROCESS_PEER = 'in-process';

type AnyHandler = (input: unknown, context: unknown) => unknown;

/** A response as a remote caller would decode it: a full message, never an init shape or encoded bytes. */
function asMessage(schema: DescMessage, value: unknown): unknown {
  if (value instanceof EncodedMessage) return fromBinary(schema, value.bytes);
  return create(schema, value as never);
}

async function* messagesOf(schema: DescMessage, requests: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const request of requests) yield create(schema, request as never);
}

/**
 * One call's scope, cancelled by the caller's signal or its deadline as grpc-js cancels a remote call:
 * the handler sees its CallContext.signal aborted, and the caller gets CANCELLED or DEADLINE_EXCEEDED.
 */
class InProcessCall {
  readonly scope: CallScope;
  /** Why the call was cancelled, once it is (its signal or its deadline). */
  private cancelledWith: LedgerlineError | undefined;
  /**
   * How to fail each wait under way (race). One set rather than races against a shared promise that
   * never settles: each such race would leave a reaction on it, so a stream open for the process's
   * life (standalone's Publish) would keep every response it ever carried.
   */
  private readonly waiting = new Set<(error: LedgerlineError) => void>();
  private readonly listeners: Array<() => void> = [];
  private readonly stopListening: () => void;
  private timer: NodeJS.Timeout | undefined;

  constructor(method: DescMethod, hooks: HandlerHooks, options: CallOptions) {
    const deadlineMs = options.deadlineMs;
    const deadline = deadlineMs === undefined ? Infinity : Date.now() + deadlineMs;
    this.scope = startCall(
      method,
      {
        metadata: options.metadata ?? new Metadata(),
        getPeer: () => IN_PROCESS_PEER,
        getDeadline: () => deadline,
        on: (_event, listener) => this.listeners.push(listener),
      },
      hooks,
    );
    const signal = options.signal;
    const onAbort = (): void =>
      this.cancel(
        new LedgerlineError('CANCELLED', RpcReason.CANCELLED, 'the call was cancelled', { cause: signal?.reason }),
      );
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    this.stopListening = () => signal?.removeEventListener('abort', onAbort);
    if (deadlineMs !== undefined) {
      this.timer = setTimeout(
        () =>
          this.cancel(
            new LedgerlineError('DEADLINE_EXCEEDED', RpcReason.DEADLINE_EXCEEDED, `no answer within ${deadlineMs} ms`),
          ),
        deadlineMs,
      );
    }
  }

  /** Ends the call: `error` undefined is success; returns the error the caller gets. */
  end(thrown?: unknown): LedgerlineError | undefined {
    clearTimeout(this.timer);
    this.stopListening();
    if (thrown === undefined) {
      this.scope.end();
      return undefined;
    }
    const error = LedgerlineError.from(thrown);
    this.scope.end(error);
    return error;
  }

  /** `work`, or the call's cancellation if that comes first. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.cancelledWith !== undefined) {
      // The work was started all the same: its own failure (the handler seeing the abort) is not the answer.
      work.catch(() => undefined);
      return Promise.reject(this.cancelledWith);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.add(reject);
      work.then(
        (value) => {
          this.waiting.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.waiting.delete(reject);
          reject(error);
        },
      );
    });
  }

  private cancel(error: LedgerlineError): void {
    clearTimeout(this.timer);
    this.cancelledWith ??= error;
    for (const fail of this.waiting) fail(error);
    this.waiting.clear();
    for (const listener of this.listeners.splice(0)) listener();
  }
}

function inputOf(method: DescMethod, call: InProcessCall, hooks: HandlerHooks, input: unknown): Promise<unknown> {
  const streaming = method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming';
  const context = call.scope.context;
  if (streaming) {
    const requests = messagesOf(method.input, input as AsyncIterable<unknown>);
    return Promise.resolve(
      hooks.authorize === undefined ? requests : authorizedRequests(requests, context, hooks.authorize),
    );
  }
  const request = create(method.input, input as never);
  return Promise.resolve(hooks.authorize?.(context, request)).then(() => request);
}

function unaryMethod(method: DescMethod, handler: AnyHandler, hooks: HandlerHooks) {
  return async (input: unknown, options: CallOptions = {}): Promise<unknown> => {
    const call = new InProcessCall(method, hooks, options);
    try {
      const request = await call.race(inputOf(method, call, hooks, input));
      const response = await call.race(Promise.resolve(handler(request, call.scope.context)));
      call.end();
      return asMessage(method.output, response);
    } catch (thrown) {
      throw call.end(thrown);
    }
  };
}

function streamingMethod(method: DescMethod, handler: AnyHandler, hooks: HandlerHooks) {
  return (input: unknown, options: CallOptions = {}): AsyncIterable<unknown> => ({
    async *[Symbol.asyncIterator]() {
      const call = new InProcessCall(method, hooks, options);
      let responses: AsyncIterator<unknown> | undefined;
      try {
        const request = await call.race(inputOf(method, call, hooks, input));
        responses = (handler(request, call.scope.context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        for (;;) {
          const next = await call.race(responses.next());
          if (next.done === true) break;
          yield asMessage(method.output, next.value);
        }
        call.end();
      } catch (thrown) {
        throw call.end(thrown);
      } finally {
        // A caller that stops reading early ends the handler's stream, as a cancelled remote call does.
        Promise.resolve(responses?.return?.(undefined)).catch(() => undefined);
      }
    },
  });
}

/**
 * A client whose calls run `impl`'s handlers in this process, through the hooks
 * a server gives every call (authorization of each request, in-flight
 * tracking and metrics, the draining signal), with nothing encoded and no
 * socket crossed. For a service hosted in the same process as the one it
 * calls (standalone's Kafka gateway and its writer owner): the same calls
 * are refused as over gRPC, requests and answers are whole messages as a
 * remote client decodes them, and a call's signal and deadline cancel it as
 * they cancel a remote one. The caller carries no TLS certificate, so it is
 * authorized by its token as any client is, never as a service.
 */
export function createInProcessClient<S extends DescService>(
  service: S,
  impl: ServiceImpl<S>,
  hooks: HandlerHooks = {},
): Client<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    const handler = boundHandler(service, impl, method) as AnyHandler;
    const streamingOutput = method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming';
    client[method.localName] = streamingOutput
      ? streamingMethod(method, handler, hooks)
      : unaryMethod(method, handler, hooks);
  }
  return client as Client<S>;
}
