import { connect, type Socket } from 'node:net';

/** A peer gateway as the watch reaches it (an AdvertisedBroker, named apart so gateway-peers.ts can import this). */
export interface WatchedPeer {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

export interface PeerWatchOptions {
  /** How long a connection attempt may take before it says nothing about the peer. */
  connectTimeoutMs: number;
  /** The wait before a peer found gone (or unanswering) is tried again. */
  retryMs: number;
  /** Called when a peer is found gone, or found back. */
  onChange: () => void;
}

interface Watched {
  readonly peer: WatchedPeer;
  socket: Socket | undefined;
  timer: NodeJS.Timeout | undefined;
  gone: boolean;
  /** When a dropped connection was last tried again at once. */
  reopenedAtMs: number;
}

const key = (peer: WatchedPeer): string => `${peer.nodeId}@${peer.host}:${peer.port}`;

/**
 * Tells, within milliseconds, which peer gateways are gone: a connection is
 * held open to each peer's Kafka port, and when it closes the port is tried
 * again at once. A refused attempt is the peer's kernel saying nothing listens
 * there (the process exited, or closed its listener on SIGTERM), so the peer
 * is gone until a later attempt is accepted. Any other failure (a timeout, no
 * route) says nothing, and the peer stays listed: its session's TTL decides.
 *
 * Why: the registered list is refreshed every kafkaGatewayRefreshMs, and a
 * client whose connection to a stopped gateway drops asks another for
 * Metadata within a few hundred milliseconds. A list that still names the
 * stopped gateway then keeps the client fetching from it: kafkajs retried it
 * for about 30 s before its consumer restarted and rejoined its group.
 */
export class PeerWatch {
  private readonly watched = new Map<string, Watched>();
  private closed = false;

  constructor(private readonly options: PeerWatchOptions) {}

  /** Watches exactly `peers` from now on. */
  set(peers: readonly WatchedPeer[]): void {
    const wanted = new Map(peers.map((peer) => [key(peer), peer]));
    for (const [name, watched] of this.watched) {
      if (!wanted.has(name)) {
        this.forget(watched);
        this.watched.delete(name);
      }
    }
    for (const [name, peer] of wanted) {
      if (this.watched.has(name)) continue;
      const watched: Watched = { peer, socket: undefined, timer: undefined, gone: false, reopenedAtMs: -Infinity };
      this.watched.set(name, watched);
      this.open(watched);
    }
  }

  /** Whether the peer's port refused the last attempt to reach it. */
  isGone(peer: WatchedPeer): boolean {
    return this.watched.get(key(peer))?.gone ?? false;
  }

  close(): void {
    this.closed = true;
    for (const watched of this.watched.values()) this.forget(watched);
    this.watched.clear();
  }

  private open(watched: Watched): void {
    if (this.closed || this.watched.get(key(watched.peer)) !== watched) return;
    const socket = connect({ host: watched.peer.host, port: watched.peer.port });
    watched.socket = socket;
    let connectedAtMs: number | undefined;
    let refused = false;
    socket.setTimeout(this.options.connectTimeoutMs, () => {
      if (connectedAtMs === undefined) socket.destroy();
    });
    socket.once('connect', () => {
      connectedAtMs = Date.now();
      socket.setTimeout(0);
      socket.setKeepAlive(true);
      this.mark(watched, false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      refused = error.code === 'ECONNREFUSED';
    });
    // Data is never expected: a peer answers only requests, and none is sent.
    socket.on('data', () => undefined);
    socket.once('close', () => {
      if (watched.socket !== socket) return;
      watched.socket = undefined;
      if (refused) this.mark(watched, true);
      // A connection that was up and dropped is tried again at once (a stopping peer's listener is already
      // closed by then), unless the last one tried at once dropped too within retryMs (a peer at its connection
      // limit accepts and closes); a failed attempt is tried again after retryMs.
      const nowMs = Date.now();
      if (connectedAtMs !== undefined && nowMs - watched.reopenedAtMs >= this.options.retryMs) {
        watched.reopenedAtMs = nowMs;
        this.open(watched);
      } else watched.timer = setTimeout(() => this.open(watched), this.options.retryMs).unref();
    });
  }

  private mark(watched: Watched, gone: boolean): void {
    if (watched.gone === gone) return;
    watched.gone = gone;
    this.options.onChange();
  }

  private forget(watched: Watched): void {
    if (watched.timer !== undefined) clearTimeout(watched.timer);
    const socket = watched.socket;
    watched.socket = undefined;
    socket?.destroy();
  }
}
