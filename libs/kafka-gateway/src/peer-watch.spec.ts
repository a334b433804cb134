import { createServer, type Server, type Socket } from 'node:net';
import { eventually } from '@ledgerline/testing';
import type { AdvertisedBroker } from './gateway-peers.js';
import { PeerWatch } from './peer-watch.js';

/** A peer gateway's Kafka listener, as far as the watch sees one: a port that accepts, or refuses once closed. */
class FakePeer {
  private server: Server | undefined;
  readonly sockets = new Set<Socket>();
  accepted = 0;

  constructor(public port = 0) {}

  async listen(): Promise<void> {
    const server = createServer((socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** As a stopping gateway does: stops listening and closes every connection. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  broker(nodeId: number): AdvertisedBroker {
    return { nodeId, host: '127.0.0.1', port: this.port };
  }
}

const WAIT = { attempts: 100, intervalMs: 20 };

describe('watching peer gateways', () => {
  const peers: FakePeer[] = [];
  let watch: PeerWatch | undefined;
  afterEach(async () => {
    watch?.close();
    for (const peer of peers.splice(0)) await peer.stop();
  });

  it('finds a peer gone as soon as its listener closes, and back once it listens again', async () => {
    const peer = new FakePeer();
    peers.push(peer);
    await peer.listen();
    let changes = 0;
    watch = new PeerWatch({ connectTimeoutMs: 1_000, retryMs: 50, onChange: () => changes++ });
    watch.set([peer.broker(2)]);
    await eventually(() => peer.sockets.size === 1, { ...WAIT, description: 'the watch connected' });
    expect(watch.isGone(peer.broker(2))).toBe(false);
    expect(changes).toBe(0);

    await peer.stop();
    await eventually(() => watch!.isGone(peer.broker(2)), { ...WAIT, description: 'the peer found gone' });
    expect(changes).toBe(1);

    await peer.listen();
    await eventually(() => !watch!.isGone(peer.broker(2)), { ...WAIT, description: 'the peer found back' });
    expect(changes).toBe(2);
  });

  it('calls a peer that refuses from the start gone, and stops trying a peer no longer listed', async () => {
    const refusing = new FakePeer();
    await refusing.listen();
    await refusing.stop();
    const listening = new FakePeer();
    peers.push(listening);
    await listening.listen();
    watch = new PeerWatch({ connectTimeoutMs: 1_000, retryMs: 50, onChange: () => undefined });
    watch.set([refusing.broker(2), listening.broker(3)]);
    await eventually(() => watch!.isGone(refusing.broker(2)), { ...WAIT, description: 'the refusing peer gone' });
    await eventually(() => listening.sockets.size === 1, { ...WAIT, description: 'the listening peer watched' });
    expect(watch.isGone(listening.broker(3))).toBe(false);

    watch.set([refusing.broker(2)]);
    await eventually(() => listening.sockets.size === 0, { ...WAIT, description: 'the unlisted peer let go' });
    const acceptedBefore = listening.accepted;
    // A retry interval at least has passed once the still listed peer, listening again, is found back.
    await refusing.listen();
    peers.push(refusing);
    await eventually(() => !watch!.isGone(refusing.broker(2)), { ...WAIT, description: 'the listed peer back' });
    expect(listening.accepted).toBe(acceptedBefore);
  });
});
