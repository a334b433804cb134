import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { KafkaConnection } from './connection.js';
import type { GatewayContext } from './gateway-context.js';
import type { AdvertisedBroker } from './gateway-peers.js';
import { contextOptions } from '@ledgerline/security';
import type { ListenerTls } from './listener-tls.js';

/**
 * Kafka clients start the TLS handshake as soon as they connect; one that has
 * not finished it by then is dropped (Node's own default is 120 s), so
 * half-open handshakes, which kafkaMaxConnections does not count yet, stay few.
 */
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * The Kafka listener: one KafkaConnection per client, at most
 * kafkaMaxConnections at once; with `tls`, a TLS listener from the first byte
 * (Kafka's SSL listener: no STARTTLS), otherwise plain TCP.
 */
export class KafkaGatewayServer {
  private readonly server: Server;
  private readonly connections = new Set<KafkaConnection>();
  private boundPort = 0;
  private stopReloading: (() => void) | undefined;
  /** Set while idle() waits: called when the last connection closes. */
  private whenIdle: (() => void) | undefined;

  constructor(
    private readonly context: GatewayContext,
    private readonly tls?: ListenerTls,
  ) {
    this.server = tls === undefined ? createServer((socket) => this.accept(socket)) : this.tlsServer(tls);
  }

  /** Whether the listener speaks TLS. */
  get secure(): boolean {
    return this.tls !== undefined;
  }

  private tlsServer(tls: ListenerTls): TlsServer {
    const server = createTlsServer(
      {
        ...contextOptions(tls.files.set),
        // A certificate is only asked for when it is required: the gateway takes no identity from one.
        requestCert: tls.requireClientCert,
        rejectUnauthorized: tls.requireClientCert,
        handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
      },
      (socket) => this.accept(socket),
    );
    // Connections accepted after a rotation get the new certificate; open ones keep theirs.
    this.stopReloading = tls.files.onChange((set) => server.setSecureContext(contextOptions(set)));
    server.on('tlsClientError', (error, socket) =>
      this.context.logger.debug({ client: socket.remoteAddress, err: error }, 'kafka TLS handshake failed'),
    );
    return server;
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
    const connection = new KafkaConnection(socket, this.context, () => {
      this.connections.delete(connection);
      if (this.connections.size === 0) this.whenIdle?.();
    });
    this.connections.add(connection);
  }

  /** Resolves once no client is connected, or after `maxMs`: a leaving gateway's clients move to the others. */
  async idle(maxMs: number): Promise<void> {
    if (this.connections.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.whenIdle = resolve;
      timer = setTimeout(resolve, maxMs);
    });
    clearTimeout(timer);
    this.whenIdle = undefined;
  }

  /** Stops listening and closes every connection (clients reconnect to another gateway). */
  close(): Promise<void> {
    this.stopReloading?.();
    this.tls?.files.close();
    for (const connection of [...this.connections]) connection.close('gateway stopping');
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/**
 * The broker id of a gateway that was given none (kafkaNodeId 0): taken from
 * its advertised address, so the pods of one Deployment, which share their
 * settings, each get their own, and keep it for as long as their address.
 */
export function derivedNodeId(host: string, port: number): number {
  const id = createHash('sha256').update(`${host}:${port}`).digest().readUInt32BE(0) & 0x7fffffff;
  return id === 0 ? 1 : id;
}

/**
 * What Metadata answers for this gateway: the advertised address; without
 * one, the bound interface (localhost for a wildcard) and the bound port.
 * Node id 0 stands for one derived from that address (derivedNodeId).
 */
export function advertisedBroker(
  nodeId: number,
  advertisedAddress: string,
  boundHost: string,
  boundPort: number,
): AdvertisedBroker {
  let host = WILDCARD_HOSTS.has(boundHost) ? 'localhost' : boundHost;
  let port = boundPort;
  if (advertisedAddress !== '') {
    const match = /^(.*?)(?::(\d+))?$/.exec(advertisedAddress);
    host = match?.[1] ?? advertisedAddress;
    port = match?.[2] === undefined ? boundPort : Number(match[2]);
  }
  return { nodeId: nodeId === 0 ? derivedNodeId(host, port) : nodeId, host, port };
}
