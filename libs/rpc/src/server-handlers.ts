import type { DescMethod } from '@bufbuild/protobuf';
import type {
  Metadata,
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedHandleCall,
  sendUnaryData,
} from '@grpc/grpc-js';
import { errorToStatus } from './error-wire.js';
import { LedgerlineError, unexpectedRejection, type CodeName } from '@ledgerline/errors';
import type { CallContext } from './method-types.js';
import type { DecodedRequest } from './service-definition.js';
import { methodPath } from './service-definition.js';
import { readRequests, writeAll } from './stream-io.js';

/** What the server reports about every finished call (for metrics and logs). */
export interface CallEndInfo {
  /** The gRPC path, `/package.Service/Method`. */
  method: string;
  code: CodeName | 'OK';
  durationMs: number;
  /** The error the handler failed with, already normalised. */
  error?: LedgerlineError;
}

export interface HandlerHooks {
  onCallEnd?: (info: CallEndInfo) => void;
}

interface GrpcCallLike {
  metadata: Metadata;
  getPeer(): string;
  getDeadline(): Date | number;
  on(event: 'cancelled', listener: () => void): unknown;
}

interface CallScope {
  context: CallContext;
  /**
   * Records the end of the call (`error` undefined means success). Called
   * before the status is sent: grpc-js reports every closed stream as
   * cancelled, even a finished one, and only an unfinished call is aborted.
   */
  end(error?: LedgerlineError): void;
}

function startCall(method: DescMethod, call: GrpcCallLike, hooks: HandlerHooks): CallScope {
  const startedAt = performance.now();
  const cancelled = new AbortController();
  let ended = false;
  call.on('cancelled', () => {
    if (!ended) cancelled.abort(new LedgerlineError('CANCELLED', 'CANCELLED', 'the call was cancelled'));
  });
  const deadline = call.getDeadline();
  const context: CallContext = {
    method: methodPath(method),
    peer: call.getPeer(),
    deadlineMs: deadline instanceof Date ? deadline.getTime() : deadline,
    signal: cancelled.signal,
    metadata: call.metadata,
  };
  return {
    context,
    end: (error) => {
      ended = true;
      const code = cancelled.signal.aborted ? 'CANCELLED' : (error?.code ?? 'OK');
      hooks.onCallEnd?.({
        method: context.method,
        code,
        durationMs: performance.now() - startedAt,
        ...(error === undefined ? {} : { error }),
      });
    },
  };
}

function requestOf(decoded: DecodedRequest): unknown {
  if (!decoded.ok) throw decoded.error;
  return decoded.message;
}

type AnyHandler = (input: unknown, context: CallContext) => unknown;

function unaryHandler(method: DescMethod, impl: AnyHandler, hooks: HandlerHooks, streamingInput: boolean) {
  return (
    call: ServerUnaryCall<DecodedRequest, unknown> | ServerReadableStream<DecodedRequest, unknown>,
    callback: sendUnaryData<unknown>,
  ): void => {
    const scope = startCall(method, call, hooks);
    (async () => {
      try {
        const input = streamingInput
          ? readRequests(call as ServerReadableStream<DecodedRequest, unknown>, scope.context.signal)
          : requestOf((call as ServerUnaryCall<DecodedRequest, unknown>).request);
        const response = await impl(input, scope.context);
        scope.end();
        callback(null, response);
      } catch (thrown) {
        const error = LedgerlineError.from(thrown);
        scope.end(error);
        callback(errorToStatus(error));
      }
    })().catch(unexpectedRejection);
  };
}

function streamingHandler(method: DescMethod, impl: AnyHandler, hooks: HandlerHooks, streamingInput: boolean) {
  return (call: ServerWritableStream<DecodedRequest, unknown> | ServerDuplexStream<DecodedRequest, unknown>): void => {
    const scope = startCall(method, call, hooks);
    const { signal } = scope.context;
    (async () => {
      try {
        const input = streamingInput
          ? readRequests(call as ServerDuplexStream<DecodedRequest, unknown>, signal)
          : requestOf((call as ServerWritableStream<DecodedRequest, unknown>).request);
        await writeAll(call, impl(input, scope.context) as AsyncIterable<unknown>, signal);
        const wasCancelled = signal.aborted;
        scope.end();
        if (!wasCancelled) call.end();
      } catch (thrown) {
        const error = LedgerlineError.from(thrown);
        const wasCancelled = signal.aborted;
        scope.end(error);
        // A cancelled call has no one left to tell; grpc-js has already closed it.
        if (!wasCancelled) call.emit('error', errorToStatus(error));
      }
    })().catch(unexpectedRejection);
  };
}

/** The grpc-js handler for one method: decodes, calls the async implementation, encodes results and errors. */
export function handlerFor(method: DescMethod, impl: AnyHandler, hooks: HandlerHooks): UntypedHandleCall {
  switch (method.methodKind) {
    case 'unary':
      return unaryHandler(method, impl, hooks, false) as UntypedHandleCall;
    case 'client_streaming':
      return unaryHandler(method, impl, hooks, true) as UntypedHandleCall;
    case 'server_streaming':
      return streamingHandler(method, impl, hooks, false) as UntypedHandleCall;
    case 'bidi_streaming':
      return streamingHandler(method, impl, hooks, true) as UntypedHandleCall;
  }
}
