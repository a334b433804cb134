import { connect, type Socket } from 'node:net';
import { LedgerlineError } from '@ledgerline/errors';
import {
  apiSpec,
  decodeResponse,
  encodeRequest,
  FrameDecoder,
  KafkaErrorCode,
  type Message,
} from '@ledgerline/kafka-protocol';
import { ConsoleReason } from './console-reason.js';

/** Largest answer the console reads from a Kafka gateway (a DescribeGroups of many members). */
const MAX_KAFKA_FRAME_BYTES = 16 * 1024 * 1024;

function unavailable(message: string): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', ConsoleReason.CONSOLE_KAFKA_ERROR, message);
}

/**
 * One Kafka connection to a gateway, one request at a time, every wait
 * bounded by `deadlineMs`: what the Kafka page needs to ask a gateway about
 * its consumer groups as an admin client would (ListGroups, DescribeGroups,
 * OffsetFetch, ListOffsets), signed in with the caller's token when it has one.
 */
export class KafkaConnection {
  readonly #socket: Socket;
  readonly #frames: Buffer[] = [];
  readonly #decoder = new FrameDecoder(MAX_KAFKA_FRAME_BYTES);
  #waiter: (() => void) | undefined;
  #failure: Error | undefined;
  #correlationId = 0;

  private constructor(
    socket: Socket,
    private readonly deadlineMs: number,
  ) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#frames.push(...this.#decoder.push(chunk));
      } catch (error) {
        this.#failure = error as Error;
        socket.destroy();
      }
      this.#waiter?.();
    });
    socket.on('error', (error) => {
      this.#failure = error;
      this.#waiter?.();
    });
    socket.on('close', () => {
      this.#failure ??= unavailable('the Kafka gateway closed the connection');
      this.#waiter?.();
    });
  }

  static open(address: string, deadlineMs: number): Promise<KafkaConnection> {
    const colon = address.lastIndexOf(':');
    const socket = connect(Number(address.slice(colon + 1)), address.slice(0, colon));
    const connection = new KafkaConnection(socket, deadlineMs);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(unavailable(`no connection to the Kafka gateway at ${address} within ${deadlineMs} ms`));
      }, deadlineMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(connection);
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(unavailable(`the Kafka gateway at ${address} cannot be reached: ${error.message}`));
      });
    });
  }

  /** Sends one request and waits (bounded) for its answer. */
  async request(apiKey: number, version: number, body: Message): Promise<Message> {
    const spec = apiSpec(apiKey)!;
    const correlationId = ++this.#correlationId;
    this.#socket.write(
      encodeRequest(spec, { apiKey, apiVersion: version, correlationId, clientId: 'ledgerline-console' }, body),
    );
    const frame = await this.#nextFrame(spec.name);
    const answer = decodeResponse(spec, version, frame);
    if (answer.correlationId !== correlationId) throw unavailable(`${spec.name} was answered out of order`);
    return answer.body;
  }

  #nextFrame(what: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        reject(
          new LedgerlineError(
            'DEADLINE_EXCEEDED',
            ConsoleReason.CONSOLE_KAFKA_ERROR,
            `${what} got no answer within ${this.deadlineMs} ms`,
          ),
        );
      }, this.deadlineMs);
      const check = () => {
        const frame = this.#frames.shift();
        if (frame === undefined && this.#failure === undefined) return;
        clearTimeout(timer);
        this.#waiter = undefined;
        if (frame !== undefined) resolve(frame);
        else
          reject(
            this.#failure instanceof LedgerlineError ? this.#failure : unavailable(String(this.#failure?.message)),
          );
      };
      this.#waiter = check;
      check();
    });
  }

  /** SASL/PLAIN with the password `token:<jwt>`, the gateway's convention for a Ledgerline token. */
  async signIn(token: string): Promise<void> {
    const handshake = await this.request(17, 1, { mechanism: 'PLAIN' });
    if (handshake['errorCode'] !== KafkaErrorCode.NONE)
      throw unavailable(`the Kafka gateway refused SASL/PLAIN (error ${String(handshake['errorCode'])})`);
    const authBytes = Buffer.from(`\u0000console\u0000token:${token}`, 'utf8');
    const answer = await this.request(36, 1, { authBytes });
    if (answer['errorCode'] !== KafkaErrorCode.NONE) {
      throw new LedgerlineError(
        'UNAUTHENTICATED',
        ConsoleReason.CONSOLE_KAFKA_ERROR,
        `the Kafka gateway refused the token: ${String(answer['errorMessage'] ?? answer['errorCode'])}`,
      );
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}
