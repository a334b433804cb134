import type { DescMessage, DescMethod, DescService, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { Metadata } from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import type { EncodedMessage } from './encoded-message.js';

/** What a handler knows about the call it serves. */
export interface CallContext {
  /** The gRPC path, `/package.Service/Method`. */
  readonly method: string;
  /** The client's address as grpc-js reports it. */
  readonly peer: string;
  /** The client's deadline in milliseconds since the epoch, or Infinity when it set none. */
  readonly deadlineMs: number;
  /** Aborted when the client cancels the call or its deadline passes: stop working then. */
  readonly signal: AbortSignal;
  /** The request metadata (headers). */
  readonly metadata: Metadata;
  /**
   * The client's TLS certificate, present only when the connection is TLS and
   * the certificate was verified against the server's trusted CA (an
   * unverified one never shows up here).
   */
  readonly peerCertificate?: PeerCertificate;
  /**
   * Aborted when the server starts to drain (a graceful shutdown). A stream
   * that never ends on its own (a watch) ends then, answering OK, so the drain
   * need not wait out its bound for it; every other call just finishes.
   * Absent when the server was started without one.
   */
  readonly draining?: AbortSignal;
}

/** Per-call options of a client method. */
export interface CallOptions {
  /** Fail with DEADLINE_EXCEEDED after this many milliseconds (the whole call, for streams). */
  deadlineMs?: number;
  /** Aborting it cancels the call: the server's handler sees its signal aborted. */
  signal?: AbortSignal;
  /** Request metadata (headers) to send. */
  metadata?: Metadata;
  /**
   * Wait (within the deadline) for the channel to connect instead of failing
   * at once with UNAVAILABLE while the server cannot be reached: for a
   * service's first call at start, when its peers may be starting too.
   */
  waitForReady?: boolean;
}

type Input<M extends DescMethod> = M['input'];
type Output<M extends DescMethod> = M['output'];

export type UnaryImpl<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: CallContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/** What a streaming handler yields: a message, or one already encoded (see EncodedMessage). */
export type StreamedOutput<O extends DescMessage> = MessageInitShape<O> | EncodedMessage<O>;

export type ServerStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: CallContext,
) => AsyncIterable<StreamedOutput<O>>;

export type ClientStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  requests: AsyncIterable<MessageShape<I>>,
  context: CallContext,
) => Promise<MessageInitShape<O>>;

export type BidiStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  requests: AsyncIterable<MessageShape<I>>,
  context: CallContext,
) => AsyncIterable<StreamedOutput<O>>;

/** The handler type for one method, chosen by its kind. */
export type MethodImpl<M extends DescMethod> = M extends { methodKind: 'unary' }
  ? UnaryImpl<Input<M>, Output<M>>
  : M extends { methodKind: 'server_streaming' }
    ? ServerStreamingImpl<Input<M>, Output<M>>
    : M extends { methodKind: 'client_streaming' }
      ? ClientStreamingImpl<Input<M>, Output<M>>
      : M extends { methodKind: 'bidi_streaming' }
        ? BidiStreamingImpl<Input<M>, Output<M>>
        : // A descriptor built at run time (not generated) does not say its kind in its type.
          | UnaryImpl<Input<M>, Output<M>>
          | ServerStreamingImpl<Input<M>, Output<M>>
          | ClientStreamingImpl<Input<M>, Output<M>>
          | BidiStreamingImpl<Input<M>, Output<M>>;

/** The handlers of a whole service, keyed by each method's `localName` (`createTopic`). */
export type ServiceImpl<S extends DescService> = {
  [K in keyof S['method']]: MethodImpl<S['method'][K]>;
};

export type UnaryCall<I extends DescMessage, O extends DescMessage> = (
  request: MessageInitShape<I>,
  options?: CallOptions,
) => Promise<MessageShape<O>>;

export type ServerStreamingCall<I extends DescMessage, O extends DescMessage> = (
  request: MessageInitShape<I>,
  options?: CallOptions,
) => AsyncIterable<MessageShape<O>>;

export type ClientStreamingCall<I extends DescMessage, O extends DescMessage> = (
  requests: AsyncIterable<MessageInitShape<I>>,
  options?: CallOptions,
) => Promise<MessageShape<O>>;

export type BidiStreamingCall<I extends DescMessage, O extends DescMessage> = (
  requests: AsyncIterable<MessageInitShape<I>>,
  options?: CallOptions,
) => AsyncIterable<MessageShape<O>>;

/** The client function for one method, chosen by its kind. */
export type ClientMethod<M extends DescMethod> = M extends { methodKind: 'unary' }
  ? UnaryCall<Input<M>, Output<M>>
  : M extends { methodKind: 'server_streaming' }
    ? ServerStreamingCall<Input<M>, Output<M>>
    : M extends { methodKind: 'client_streaming' }
      ? ClientStreamingCall<Input<M>, Output<M>>
      : M extends { methodKind: 'bidi_streaming' }
        ? BidiStreamingCall<Input<M>, Output<M>>
        : (...args: never[]) => unknown;

/** A typed client: one function per method, keyed by its `localName`. */
export type Client<S extends DescService> = {
  readonly [K in keyof S['method']]: ClientMethod<S['method'][K]>;
};
