import type { Socket } from 'node:net';
import {
  ApiKey,
  apiSpec,
  decodeRequest,
  encodeResponse,
  encodeResponseChunks,
  FrameDecoder,
  isProtocolError,
  KafkaProtocolReason,
  peekRequestHeader,
} from '@ledgerline/kafka-protocol';
import type { GatewayContext } from './gateway-context.js';
import { API_HANDLERS, unsupportedApiVersionsBody } from './handlers/index.js';
import { ANONYMOUS } from './owner-router.js';
import { newSession, type Session } from './session.js';

/** What a connection may send before it authenticated, when authentication is required (as a Kafka SASL listener). */
const BEFORE_AUTHENTICATION: ReadonlySet<number> = new Set([
  ApiKey.ApiVersions,
  ApiKey.SaslHandshake,
  ApiKey.SaslAuthenticate,
]);

/** How long a connection closed after its last answer waits for the client to read it and hang up. */
const CLOSE_LINGER_MS = 5_000;

/**
 * One Kafka client connection. Requests are handled concurrently, up to
 * kafkaMaxInFlightRequests of them holding up to kafkaMaxInFlightRequestBytes
 * of frames (one request always may start), and answered strictly in the
 * order they came, as Kafka clients require. No request starts past either
 * bound or while more than kafkaMaxOutputBufferBytes of answers wait for the
 * client to read them, so a client that stops reading holds at most that bound
 * plus one answer per request in flight (a Fetch answer is at most
 * kafkaMaxFetchResponseBytes); it is closed once idle for kafkaConnectionIdleMs. A frame that
 * cannot be decoded closes the connection, as a Kafka broker does (except
 * ApiVersions in a version not served, which is answered in v0).
 *
 * When the context requires authentication, a connection may send only
 * ApiVersions, SaslHandshake and SaslAuthenticate, one at a time, until a
 * SaslAuthenticate succeeds; anything else closes it, as a Kafka broker's
 * SASL listener treats it as an authentication failure.
 */
export class KafkaConnection {
  private readonly frames: FrameDecoder;
  private readonly session: Session;
  private inFlight = 0;
  /** Bytes of the frames of the requests in flight. */
  private inFlightBytes = 0;
  /** Frames read but not yet started: one read can hold thousands of small requests. */
  private readonly waitingFrames: Buffer[] = [];
  private answered: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly context: GatewayContext,
    private readonly onClose: () => void,
  ) {
    this.frames = new FrameDecoder(context.settings.kafkaMaxFrameSizeBytes);
    this.session = newSession(ANONYMOUS, socket.remoteAddress ?? '');
    socket.setNoDelay(true);
    socket.setTimeout(context.settings.kafkaConnectionIdleMs, () => this.close('idle'));
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('drain', () => this.startWaiting());
    socket.on('error', () => this.close('socket error'));
    socket.on('close', () => this.close('closed by the client'));
  }

  get bufferedOutputBytes(): number {
    return this.socket.writableLength;
  }

  /** Closes at once, or with `afterWrites` once what was written reaches the client (a last answer). */
  close(why: string, afterWrites = false): void {
    if (this.closed) return;
    this.closed = true;
    this.context.logger.debug({ client: this.session.clientHost, why }, 'kafka connection closed');
    if (afterWrites) {
      this.socket.end();
      this.socket.setTimeout(CLOSE_LINGER_MS, () => this.socket.destroy());
    } else {
      this.socket.destroy();
    }
    this.onClose();
  }

  private received(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.frames.push(chunk);
    } catch (error) {
      this.context.logger.warn({ client: this.session.clientHost, err: error }, 'kafka frame refused');
      this.close('bad frame');
      return;
    }
    this.waitingFrames.push(...frames);
    this.startWaiting();
  }

  /** Starts waiting requests, in order, while the in-flight bounds and the output bound leave room. */
  private startWaiting(): void {
    while (this.waitingFrames.length > 0 && this.hasRoom(this.waitingFrames[0]!.length)) {
      this.enqueue(this.waitingFrames.shift() as Buffer);
    }
    if (this.waitingFrames.length > 0 || !this.hasRoom(0)) this.socket.pause();
    else this.socket.resume();
  }

  /** Authentication is required and this connection has not authenticated yet. */
  private get unauthenticated(): boolean {
    return this.context.authentication !== undefined && !this.session.authenticated;
  }

  /** Whether a request of `frameBytes` may start now. */
  private hasRoom(frameBytes: number): boolean {
    const settings = this.context.settings;
    // One at a time before authentication, so a request pipelined after SaslAuthenticate sees its outcome.
    const inFlightLimit = this.unauthenticated ? 1 : settings.kafkaMaxInFlightRequests;
    // The byte bound never stops a connection with nothing in flight: a frame within kafkaMaxFrameSizeBytes always starts.
    const bytesLeft = this.inFlight === 0 || this.inFlightBytes + frameBytes <= settings.kafkaMaxInFlightRequestBytes;
    return (
      this.inFlight < inFlightLimit && bytesLeft && this.socket.writableLength <= settings.kafkaMaxOutputBufferBytes
    );
  }

  private enqueue(frame: Buffer): void {
    if (this.closed) return;
    this.inFlight++;
    this.inFlightBytes += frame.length;
    const answer = this.answer(frame);
    this.answered = this.answered
      .then(async () => {
        const bytes = await answer;
        this.inFlight--;
        this.inFlightBytes -= frame.length;
        if (this.closed) return;
        if (bytes === 'close') return this.close('request refused');
        if (bytes !== undefined) this.write(bytes);
        if (this.session.closeAfterAnswer) return this.close('authentication failed', true);
        this.startWaiting();
      })
      .catch((error: unknown) => {
        this.context.logger.error({ err: error }, 'kafka answer could not be written');
        this.close('internal error');
      });
  }

  /**
   * One answer's buffers, corked together so that the socket sends them in one writev: a Fetch answer's record
   * batches go out as they were encoded, never copied into one buffer (each copy of a megabyte answer cost
   * milliseconds here).
   */
  private write(chunks: Buffer[]): void {
    if (chunks.length === 1) {
      this.socket.write(chunks[0]!);
      return;
    }
    this.socket.cork();
    for (const chunk of chunks) this.socket.write(chunk);
    this.socket.uncork();
  }

  /** The encoded answer's buffers, undefined for none, or 'close' when the request cannot be answered. */
  private async answer(frame: Buffer): Promise<Buffer[] | undefined | 'close'> {
    let request;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      return this.refusal(frame, error);
    }
    const handler = API_HANDLERS.get(request.header.apiKey);
    if (handler === undefined) return 'close';
    if (this.unauthenticated && !BEFORE_AUTHENTICATION.has(request.header.apiKey)) {
      this.context.logger.warn(
        { client: this.session.clientHost, apiKey: request.header.apiKey, api: request.spec.name },
        'kafka request before SASL authentication: connection closed',
      );
      return 'close';
    }
    try {
      const body = await handler(this.context, request, this.session);
      if (body === undefined) return undefined;
      return encodeResponseChunks(request.spec, request.header.apiVersion, request.header.correlationId, body);
    } catch (error) {
      this.context.logger.warn({ api: request.spec.name, err: error }, 'kafka request failed');
      return 'close';
    }
  }

  private refusal(frame: Buffer, error: unknown): Buffer[] | 'close' {
    this.context.logger.warn({ client: this.session.clientHost, err: error }, 'kafka request refused');
    if (!isProtocolError(error) || error.reason !== KafkaProtocolReason.KAFKA_UNSUPPORTED_VERSION) return 'close';
    const header = peekRequestHeader(frame);
    const spec = apiSpec(header.apiKey);
    if (header.apiKey !== ApiKey.ApiVersions || spec === undefined) return 'close';
    return [encodeResponse(spec, 0, header.correlationId, unsupportedApiVersionsBody())];
  }
}
