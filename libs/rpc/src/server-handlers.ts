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
import type { Readable } from 'node:stream';
import type { PeerCertificate } from 'node:tls';
import { readRequests, writeAll } from './stream-io.js';
import { RpcReason } from './errors.js';

/** What the server reports about every finished call (for metrics and logs). */
export interface CallEndInfo {
  /** The gRPC path, `/package.Service/Method`. */
  method: string;
  code: CodeName | 'OK';
  durationMs: number;
  /** The error the handler failed with, already normalised. */
  error?: LedgerlineError;
}

/**
 * Decides whether a call may go on: throws (a LedgerlineError, usually
 * UNAUTHENTICATED or PERMISSION_DENIED) to refuse it. Called before the handler
 * with the request of a unary or server-streaming call, and with every message
 * of a client- or bidi-streaming call before the handler sees it, so a stream
 * that names a new topic midway is checked again.
 */
export type Authorize = (context: CallContext, request: unknown) => Promise<void> | void;

export interface HandlerHooks {
  /** Called as a call reaches its handler, with its gRPC path; onCallEnd follows exactly once. */
  onCallStart?: (method: string) => void;
  onCallEnd?: (info: CallEndInfo) => void;
  authorize?: Authorize;
  /** Handed to every call as CallContext.draining. */
  draining?: AbortSignal;
}

/** What startCall reads of a call: grpc-js's server calls, or an in-process call (in-process-client.ts). */
interface GrpcCallLike {
  metadata: Metadata;
  getPeer(): string;
  getDeadline(): Date | number;
  /** grpc-js 1.14: the verified peer certificate of a TLS connection. */
  getAuthContext?(): { sslPeerCertificate?: PeerCertificate } | null;
  on(event: 'cancelled', listener: () => void): unknown;
}

export interface CallScope {
  context: CallContext;
  /**
   * Records the end of the call (`error` undefined means success). Called
   * before the status is sent: grpc-js reports every closed stream as
   * cancelled, even a finished one, and only an unfinished call is aborted.
   */
  end(error?: LedgerlineError): void;
}

export function startCall(method: DescMethod, call: GrpcCallLike, hooks: HandlerHooks): CallScope {
  const startedAt = performance.now();
  const cancelled = new AbortController();
  let ended = false;
  call.on('cancelled', () => {
    if (!ended) cancelled.abort(new LedgerlineError('CANCELLED', RpcReason.CANCELLED, 'the call was cancelled'));
  });
  const deadline = call.getDeadline();
  const context: CallContext = {
    method: methodPath(method),
    peer: call.getPeer(),
    deadlineMs: deadline instanceof Date ? deadline.getTime() : deadline,
    signal: cancelled.signal,
    metadata: call.metadata,
    // grpc-js reports the peer certificate only when the handshake verified it.
    ...peerCertificateOf(call),
    ...(hooks.draining === undefined ? {} : { draining: hooks.draining }),
  };
  hooks.onCallStart?.(context.method);
  return {
    context,
    end: (error) => {
      if (ended) return;
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

function peerCertificateOf(call: GrpcCallLike): Pick<CallContext, 'peerCertificate'> {
  const certificate = call.getAuthContext?.()?.sslPeerCertificate;
  return certificate === undefined ? {} : { peerCertificate: certificate };
}

async function requestOf(decoded: DecodedRequest, context: CallContext, hooks: HandlerHooks): Promise<unknown> {
  if (!decoded.ok) throw decoded.error;
  await hooks.authorize?.(context, decoded.message);
  return decoded.message;
}

/** The requests of a stream, each one authorized before the handler sees it. */
export async function* authorizedRequests(
  requests: AsyncIterable<unknown>,
  context: CallContext,
  authorize: Authorize,
): AsyncGenerator<unknown, void, undefined> {
  for await (const request of requests) {
    await authorize(context, request);
    yield request;
  }
}

function streamOf(stream: Readable, context: CallContext, hooks: HandlerHooks): AsyncIterable<unknown> {
  const requests = readRequests(stream, context.signal);
  return hooks.authorize === undefined ? requests : authorizedRequests(requests, context, hooks.authorize);
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
          ? streamOf(call as ServerReadableStream<DecodedRequest, unknown>, scope.context, hooks)
          : await requestOf((call as ServerUnaryCall<DecodedRequest, unknown>).request, scope.context, hooks);
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
          ? streamOf(call as ServerDuplexStream<DecodedRequest, unknown>, scope.context, hooks)
          : await requestOf((call as ServerWritableStream<DecodedRequest, unknown>).request, scope.context, hooks);
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
