import type { Socket } from 'node:net';
import {
  ApiKey,
  apiSpec,
  decodeRequest,
  encodeResponse,
  FrameDecoder,
  isProtocolError,
  KafkaProtocolReason,
  peekRequestHeader,
} from '@ledgerline/kafka-protocol';
import type { GatewayContext } from './gateway-context.js';
import { API_HANDLERS, unsupportedApiVersionsBody } from './handlers/index.js';
import { ANONYMOUS } from './owner-router.js';
import type { Session } from './session.js';

/**
 * One Kafka client connection. Requests are handled concurrently, up to
 * kafkaMaxInFlightRequests, and answered strictly in the order they came, as
 * Kafka clients require. Reading pauses while that many are in flight or while
 * more than kafkaMaxOutputBufferBytes of answers wait for the client to read
 * them; a client that lets twice that pile up is disconnected. A frame that
 * cannot be decoded closes the connection, as a Kafka broker does (except
 * ApiVersions in a version not served, which is answered in v0).
 */
export class KafkaConnection {
  private readonly frames: FrameDecoder;
  private readonly session: Session;
  private inFlight = 0;
  private answered: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly context: GatewayContext,
    private readonly onClose: () => void,
  ) {
    this.frames = new FrameDecoder(context.settings.kafkaMaxFrameSizeBytes);
    this.session = { caller: ANONYMOUS, clientHost: socket.remoteAddress ?? '', saslMechanism: undefined };
    socket.setNoDelay(true);
    socket.setTimeout(context.settings.kafkaConnectionIdleMs, () => this.close('idle'));
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('drain', () => this.maybeResume());
    socket.on('error', () => this.close('socket error'));
    socket.on('close', () => this.close('closed by the client'));
  }

  close(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.context.logger.debug({ client: this.session.clientHost, why }, 'kafka connection closed');
    this.socket.destroy();
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
    for (const frame of frames) this.enqueue(frame);
  }

  private enqueue(frame: Buffer): void {
    if (this.closed) return;
    this.inFlight++;
    const answer = this.answer(frame);
    this.answered = this.answered
      .then(async () => {
        const bytes = await answer;
        this.inFlight--;
        if (this.closed) return;
        if (bytes === 'close') return this.close('request refused');
        if (bytes !== undefined) this.socket.write(bytes);
        if (this.socket.writableLength > 2 * this.context.settings.kafkaMaxOutputBufferBytes) {
          return this.close('the client does not read its answers');
        }
        this.maybeResume();
      })
      .catch((error: unknown) => {
        this.context.logger.error({ err: error }, 'kafka answer could not be written');
        this.close('internal error');
      });
    this.maybePause();
  }

  private maybePause(): void {
    const settings = this.context.settings;
    if (
      this.inFlight >= settings.kafkaMaxInFlightRequests ||
      this.socket.writableLength > settings.kafkaMaxOutputBufferBytes
    ) {
      this.socket.pause();
    }
  }

  private maybeResume(): void {
    const settings = this.context.settings;
    if (
      this.inFlight < settings.kafkaMaxInFlightRequests &&
      this.socket.writableLength <= settings.kafkaMaxOutputBufferBytes
    ) {
      this.socket.resume();
    }
  }

  /** The encoded answer, undefined for none, or 'close' when the request cannot be answered. */
  private async answer(frame: Buffer): Promise<Buffer | undefined | 'close'> {
    let request;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      return this.refusal(frame, error);
    }
    const handler = API_HANDLERS.get(request.header.apiKey);
    if (handler === undefined) return 'close';
    try {
      const body = await handler(this.context, request, this.session);
      if (body === undefined) return undefined;
      return encodeResponse(request.spec, request.header.apiVersion, request.header.correlationId, body);
    } catch (error) {
      this.context.logger.warn({ api: request.spec.name, err: error }, 'kafka request failed');
      return 'close';
    }
  }

  private refusal(frame: Buffer, error: unknown): Buffer | 'close' {
    this.context.logger.warn({ client: this.session.clientHost, err: error }, 'kafka request refused');
    if (!isProtocolError(error) || error.reason !== KafkaProtocolReason.KAFKA_UNSUPPORTED_VERSION) return 'close';
    const header = peekRequestHeader(frame);
    const spec = apiSpec(header.apiKey);
    if (header.apiKey !== ApiKey.ApiVersions || spec === undefined) return 'close';
    return encodeResponse(spec, 0, header.correlationId, unsupportedApiVersionsBody());
  }
}
