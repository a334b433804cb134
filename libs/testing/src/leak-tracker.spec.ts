import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { LeakTracker, formatLeaks, type Leak } from './leak-tracker';

describe('the leak tracker', () => {
  it('names the timers, servers, sockets and child processes started since start(), and nothing once they are closed', async () => {
    const globals = { setTimeout, setInterval };
    const tracker = new LeakTracker(globals, new Map([[1, 'unused']]));
    tracker.start();
    expect(tracker.leaks()).toEqual([]);

    const interval = globals.setInterval(function pollForever() {}, 60_000);
    const unrefd = globals.setTimeout(() => undefined, 60_000).unref();
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');

    // The tracker sees the whole process: a handle something else in this worker opened meanwhile (a
    // connection of an earlier file's client closing late) is not this test's, so only ours are compared.
    const ours = (leak: Leak): boolean =>
      (leak.kind === 'timer' && leak.description.includes('pollForever')) ||
      leak.description.includes(`:${port}`) ||
      leak.description.includes(`pid ${child.pid} `);
    const leaks = tracker.leaks().filter(ours);
    // The client socket and the one the server accepted; the unref'd timer keeps nothing alive and is not named.
    expect(leaks.map((leak) => leak.kind).sort()).toEqual(['child process', 'server', 'socket', 'socket', 'timer']);
    const report = formatLeaks('libs/x/src/x.spec.ts', leaks);
    expect(report).toMatch(/^libs\/x\/src\/x\.spec\.ts left 5 resource\(s\) running/);
    expect(report).toContain('setInterval every 60000 ms calling pollForever()');
    expect(report).toContain('leak-tracker.spec.ts');
    expect(report).toContain(`server on 127.0.0.1:${port}`);
    expect(report).toContain(`-> 127.0.0.1:${port}`);
    expect(report).toContain(`pid ${child.pid} (sleep 60)`);

    clearInterval(interval);
    clearTimeout(unrefd);
    socket.destroy();
    server.close();
    child.kill('SIGKILL');
    // Sockets, servers and children close asynchronously: settle waits for them.
    expect((await tracker.settle()).filter(ours)).toEqual([]);
  });

  it('closes what it reports, so a leak does not outlive its file', async () => {
    const globals = { setTimeout, setInterval };
    const tracker = new LeakTracker(globals);
    tracker.start();
    globals.setTimeout(() => undefined, 60_000);
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const exited = once(child, 'exit');
    for (const leak of tracker.leaks()) leak.close();
    await exited;
    expect(await tracker.settle()).toEqual([]);
  });
});
