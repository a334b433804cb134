import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { checkHealth } from './health.js';

/*
 * The health check the pod runner's gRPC probes, `cluster status` and the
 * process harness use: what it answers, and that a check of an address that
 * drops packets leaves nothing connecting behind it (grpc-js alone kept the
 * socket trying for as long as the kernel retries, which the leak check
 * caught after pods were deleted mid-probe).
 */

/** Sockets (open or still connecting) this process holds now. */
function openSockets(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
}

describe('checkHealth', () => {
  let server: Server;
  let port: number;
  const health = new HealthImplementation({ '': 'SERVING' });

  beforeAll(async () => {
    server = new Server();
    health.addToServer(server);
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error === null ? resolve(bound) : reject(error),
      ),
    );
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  it('answers what grpc.health.v1 says, and UNREACHABLE where nothing listens', async () => {
    expect(await checkHealth(`127.0.0.1:${port}`)).toBe('SERVING');
    health.setStatus('', 'NOT_SERVING');
    try {
      expect(await checkHealth(`127.0.0.1:${port}`)).toBe('NOT_SERVING');
    } finally {
      health.setStatus('', 'SERVING');
    }
    server.forceShutdown();
    expect(await checkHealth(`127.0.0.1:${port}`, 1_000)).toBe('UNREACHABLE');
  });

  it('answers UNREACHABLE for an address that is not host:port', async () => {
    expect(await checkHealth('no-port-here', 500)).toBe('UNREACHABLE');
  });

  describe('an address that drops connection attempts', () => {
    // A listener that never accepts, with its accept queue full: the kernel drops further SYNs, as a blackholed
    // address does, without leaving loopback.
    let listener: ChildProcess;
    const held: Socket[] = [];
    let fullPort: number;

    beforeAll(async () => {
      listener = spawn(
        'python3',
        [
          '-c',
          'import socket,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(120)',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      fullPort = await new Promise<number>((resolve, reject) => {
        listener.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
        listener.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
      });
      // Fill the queue: connect until an attempt hangs.
      for (let attempt = 0; attempt < 8; attempt++) {
        const opened = await new Promise<boolean>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port: fullPort, timeout: 300 });
          held.push(socket);
          socket.once('connect', () => resolve(true));
          socket.once('timeout', () => resolve(false));
          socket.once('error', () => resolve(false));
        });
        if (!opened) {
          held.pop()!.destroy();
          break;
        }
      }
    }, 15_000);
    afterAll(() => {
      held.forEach((socket) => socket.destroy());
      listener.kill('SIGKILL');
    });

    it('answers UNREACHABLE within the deadline and leaves no socket connecting', async () => {
      const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 200));
      await settle();
      const before = openSockets();
      expect(await checkHealth(`127.0.0.1:${fullPort}`, 500)).toBe('UNREACHABLE');
      await settle();
      expect(openSockets()).toBe(before);
    });
  });
});
