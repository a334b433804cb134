import { createServer, type Server, type Socket } from 'node:net';
import { KafkaConnection } from './connection.js';
import type { AdvertisedBroker, GatewayContext } from './gateway-context.js';

/** The Kafka listener: one KafkaConnection per client, at most kafkaMaxConnections at once. */
export class KafkaGatewayServer {
  private readonly server: Server;
  private readonly connections = new Set<KafkaConnection>();
  private boundPort = 0;

  constructor(private readonly context: GatewayContext) {
    this.server = createServer((socket) => this.accept(socket));
  }

  get port(): number {
    return this.boundPort;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Answer bytes queued for clients to read, over every connection (each is bounded by kafkaMaxOutputBufferBytes). */
  get bufferedOutputBytes(): number {
    let total = 0;
    for (const connection of this.connections) total += connection.bufferedOutputBytes;
    return total;
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.boundPort = typeof address === 'object' && address !== null ? address.port : port;
        resolve(this.boundPort);
      });
    });
  }

  private accept(socket: Socket): void {
    if (this.connections.size >= this.context.settings.kafkaMaxConnections) {
      this.context.logger.warn(
        { limit: this.context.settings.kafkaMaxConnections },
        'kafka connection refused: too many',
      );
      socket.destroy();
      return;
    }
    const connection = new KafkaConnection(socket, this.context, () => this.connections.delete(connection));
    this.connections.add(connection);
  }

  /** Stops listening and closes every connection (clients reconnect to another gateway). */
  close(): Promise<void> {
    for (const connection of [...this.connections]) connection.close('gateway stopping');
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/**
 * What Metadata answers for this gateway: the advertised address; without
 * one, the bound interface (localhost for a wildcard) and the bound port.
 */
export function advertisedBroker(
  nodeId: number,
  advertisedAddress: string,
  boundHost: string,
  boundPort: number,
): AdvertisedBroker {
  if (advertisedAddress === '')
    return { nodeId, host: WILDCARD_HOSTS.has(boundHost) ? 'localhost' : boundHost, port: boundPort };
  const match = /^(.*?)(?::(\d+))?$/.exec(advertisedAddress);
  const host = match?.[1] ?? advertisedAddress;
  return { nodeId, host, port: match?.[2] === undefined ? boundPort : Number(match[2]) };
}
