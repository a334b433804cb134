import type { DescMethod } from '@bufbuild/protobuf';
import {
  Metadata,
  type CallOptions as GrpcCallOptions,
  type Client as GrpcClient,
  type ClientDuplexStream,
  type ClientReadableStream,
} from '@grpc/grpc-js';
import { clientError } from './error-wire.js';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import type { CallOptions } from './method-types.js';
import { deserializer, methodPath, serializer } from './service-definition.js';
import { drained } from './stream-io.js';
import { RpcReason } from './errors.js';

/** Settings every call of one client shares. */
export interface CallDefaults {
  /** Applied to unary and client-streaming calls that set no deadline of their own. */
  defaultDeadlineMs?: number;
  /** Sent with every call (a bearer token, say); a call's own metadata adds to it and wins on a clash. */
  defaultMetadata?: Metadata;
}

function callMetadata(options: CallOptions, defaults: CallDefaults): Metadata {
  const metadata = mergedMetadata(options, defaults);
  if (options.waitForReady !== true) return metadata;
  // grpc-js takes waitForReady from the call's metadata options; the caller's own object is left as it was.
  const waiting = metadata === options.metadata ? metadata.clone() : metadata;
  waiting.setOptions({ ...waiting.getOptions(), waitForReady: true });
  return waiting;
}

function mergedMetadata(options: CallOptions, defaults: CallDefaults): Metadata {
  if (defaults.defaultMetadata === undefined) return options.metadata ?? new Metadata();
  const metadata = defaults.defaultMetadata.clone();
  if (options.metadata === undefined) return metadata;
  for (const key of Object.keys(options.metadata.getMap())) metadata.remove(key);
  metadata.merge(options.metadata);
  return metadata;
}

interface MethodWire {
  path: string;
  serialize: (value: unknown) => Buffer;
  deserialize: (bytes: Buffer) => unknown;
}

function wireOf(method: DescMethod): MethodWire {
  return { path: methodPath(method), serialize: serializer(method.input), deserialize: deserializer(method.output) };
}

function grpcOptions(options: CallOptions, fallbackDeadlineMs: number | undefined): GrpcCallOptions {
  const deadlineMs = options.deadlineMs ?? fallbackDeadlineMs;
  return deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
}

function cancelledBeforeStart(signal: AbortSignal): LedgerlineError {
  return new LedgerlineError('CANCELLED', RpcReason.CANCELLED, 'the call was cancelled before it started', {
    cause: signal.reason,
  });
}

/** Cancels `call` when `signal` aborts; returns the function that stops listening. */
function cancelOnAbort(signal: AbortSignal | undefined, call: { cancel(): void }): () => void {
  if (signal === undefined) return () => undefined;
  const onAbort = (): void => call.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * Writes the caller's requests into a client stream with backpressure, then
 * half-closes it. Resolves with the error the request iterable threw, if any,
 * so the call can fail with the caller's own error rather than CANCELLED.
 */
async function pumpRequests(
  requests: AsyncIterable<unknown>,
  call: ClientDuplexStream<unknown, unknown>,
  finished: AbortSignal,
): Promise<unknown> {
  try {
    for await (const request of requests) {
      if (finished.aborted) return undefined;
      if (!call.write(request)) await drained(call, finished);
    }
    if (!finished.aborted) call.end();
    return undefined;
  } catch (error) {
    return error ?? new Error('the request stream failed');
  }
}

export function unaryCall(client: GrpcClient, method: DescMethod, defaults: CallDefaults) {
  const wire = wireOf(method);
  return (request: unknown, options: CallOptions = {}): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (options.signal?.aborted === true) return reject(cancelledBeforeStart(options.signal));
      let stopListening = (): void => undefined;
      const call = client.makeUnaryRequest(
        wire.path,
        wire.serialize,
        wire.deserialize,
        request,
        callMetadata(options, defaults),
        grpcOptions(options, defaults.defaultDeadlineMs),
        (error, response) => {
          stopListening();
          if (error !== null) reject(clientError(error));
          else resolve(response);
        },
      );
      stopListening = cancelOnAbort(options.signal, call);
    });
}

/** Yields a response stream's messages; leaving the loop early cancels the call. */
async function* readResponses(
  call: ClientReadableStream<unknown> | ClientDuplexStream<unknown, unknown>,
  signal: AbortSignal | undefined,
  inputError: () => unknown,
): AsyncGenerator<unknown, void, undefined> {
  // grpc-js emits 'error' itself; without a listener of our own a late error would be thrown as uncaught.
  call.on('error', () => undefined);
  const stopListening = cancelOnAbort(signal, call);
  let completed = false;
  try {
    for await (const response of call) yield response;
    completed = true;
  } catch (error) {
    completed = true;
    const fromInput = inputError();
    throw fromInput === undefined ? clientError(error) : LedgerlineError.from(fromInput);
  } finally {
    stopListening();
    if (!completed) call.cancel();
  }
}

export function serverStreamingCall(client: GrpcClient, method: DescMethod, defaults: CallDefaults) {
  const wire = wireOf(method);
  return async function* (request: unknown, options: CallOptions = {}): AsyncGenerator<unknown, void, undefined> {
    if (options.signal?.aborted === true) throw cancelledBeforeStart(options.signal);
    const call = client.makeServerStreamRequest(
      wire.path,
      wire.serialize,
      wire.deserialize,
      request,
      callMetadata(options, defaults),
      grpcOptions(options, undefined),
    );
    yield* readResponses(call, options.signal, () => undefined);
  };
}

export function clientStreamingCall(client: GrpcClient, method: DescMethod, defaults: CallDefaults) {
  const wire = wireOf(method);
  return (requests: AsyncIterable<unknown>, options: CallOptions = {}): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (options.signal?.aborted === true) return reject(cancelledBeforeStart(options.signal));
      const finished = new AbortController();
      let inputError: unknown;
      let stopListening = (): void => undefined;
      const call = client.makeClientStreamRequest(
        wire.path,
        wire.serialize,
        wire.deserialize,
        callMetadata(options, defaults),
        grpcOptions(options, defaults.defaultDeadlineMs),
        (error, response) => {
          finished.abort();
          stopListening();
          if (inputError !== undefined) reject(LedgerlineError.from(inputError));
          else if (error !== null) reject(clientError(error));
          else resolve(response);
        },
      );
      stopListening = cancelOnAbort(options.signal, call);
      pumpRequests(requests, call as unknown as ClientDuplexStream<unknown, unknown>, finished.signal)
        .then((error) => {
          if (error === undefined) return;
          inputError = error;
          call.cancel();
        })
        .catch(unexpectedRejection);
    });
}

export function bidiStreamingCall(client: GrpcClient, method: DescMethod, defaults: CallDefaults) {
  const wire = wireOf(method);
  return async function* (
    requests: AsyncIterable<unknown>,
    options: CallOptions = {},
  ): AsyncGenerator<unknown, void, undefined> {
    if (options.signal?.aborted === true) throw cancelledBeforeStart(options.signal);
    const call = client.makeBidiStreamRequest(
      wire.path,
      wire.serialize,
      wire.deserialize,
      callMetadata(options, defaults),
      grpcOptions(options, undefined),
    );
    const finished = new AbortController();
    let inputError: unknown;
    pumpRequests(requests, call, finished.signal)
      .then((error) => {
        if (error === undefined) return;
        inputError = error;
        call.cancel();
      })
      .catch(unexpectedRejection);
    try {
      yield* readResponses(call, options.signal, () => inputError);
    } finally {
      finished.abort();
    }
  };
}
