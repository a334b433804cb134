import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { apiSpec, decodeResponse, encodeRequest, type Message } from '@ledgerline/kafka-protocol';

/** Every wait of a raw client is bounded: a gateway that neither answers nor closes fails the test. */
const WAIT_MS = 5_000;

/** What a request got: the decoded answer, or the gateway closing the connection instead. */
export type RawAnswer = Message | 'closed';

/** One request of a pipeline: its API, version and body. */
export interface RawRequest {
  readonly apiKey: number;
  readonly version: number;
  readonly body: Message;
}

/**
 * A bare Kafka connection for specs: one request at a time, its answer
 * decoded, and whether the gateway closed the connection. Over TLS when
 * given TLS options.
 */
export class RawKafkaClient {
  private pending = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiter: (() => void) | undefined;
  private correlationId = 0;
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readInt32BE(0)) {
        const size = this.pending.readInt32BE(0);
        this.frames.push(this.pending.subarray(4, 4 + size));
        this.pending = this.pending.subarray(4 + size);
      }
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  /** Connects, or rejects with the connection's error (a refused TLS handshake among them) within WAIT_MS. */
  static open(port: number, tls?: ConnectionOptions): Promise<RawKafkaClient> {
    return new Promise((resolve, reject) => {
      const socket =
        tls === undefined
          ? connectTcp(port, '127.0.0.1')
          : connectTls({ host: '127.0.0.1', port, servername: 'localhost', ...tls });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('no connection and no error'));
      }, WAIT_MS);
      const failed = (error: Error): void => {
        clearTimeout(timer);
        reject(error);
      };
      socket.once('error', failed);
      socket.once(tls === undefined ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        socket.on('error', () => undefined);
        resolve(new RawKafkaClient(socket));
      });
    });
  }

  /** Sends one request and waits for its answer or for the gateway to close the connection. */
  async request(apiKey: number, version: number, body: Message): Promise<RawAnswer> {
    const [answer] = await this.pipeline([{ apiKey, version, body }]);
    return answer!;
  }

  /**
   * Writes every request at once, in one chunk, so the gateway has them all
   * in flight together (as a client that pipelines does), and reads their
   * answers, which come in request order.
   */
  async pipeline(requests: readonly RawRequest[]): Promise<RawAnswer[]> {
    const specs = requests.map((request) => {
      const spec = apiSpec(request.apiKey);
      if (spec === undefined) throw new Error(`no spec for API ${request.apiKey}`);
      return spec;
    });
    const frames = requests.map((request, index) =>
      encodeRequest(
        specs[index]!,
        { apiKey: request.apiKey, apiVersion: request.version, correlationId: ++this.correlationId, clientId: 'raw' },
        request.body,
      ),
    );
    this.socket.write(Buffer.concat(frames));
    const answers: RawAnswer[] = [];
    for (const [index, request] of requests.entries()) {
      const frame = await this.next();
      answers.push(frame === undefined ? 'closed' : decodeResponse(specs[index]!, request.version, frame).body);
    }
    return answers;
  }

  /** Resolves once the gateway closed the connection; rejects after WAIT_MS. */
  async whenClosed(): Promise<void> {
    const frame = await this.next();
    if (frame !== undefined) throw new Error('an answer came where a close was expected');
  }

  private async next(): Promise<Buffer | undefined> {
    const deadline = Date.now() + WAIT_MS;
    while (this.frames.length === 0 && !this.closed) {
      if (Date.now() > deadline) throw new Error('no answer and no close');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.frames.shift();
  }

  end(): void {
    this.socket.destroy();
  }
}

/** A SASL/PLAIN authBytes: authzid NUL authcid NUL password. */
export function plainAuthBytes(user: string, password: string): Buffer {
  return Buffer.from(`\u0000${user}\u0000${password}`, 'utf8');
}
