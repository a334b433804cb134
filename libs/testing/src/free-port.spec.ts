import { createServer } from 'node:net';
import { freeClusterNodePort } from './free-port';

const listens = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

it('gives Redis Cluster nodes ports whose cluster bus port (port + 10,000) exists and is free', async () => {
  // About one ephemeral port in five is above 55,535; fifty draws would meet several.
  for (let draw = 0; draw < 50; draw++) {
    const port = await freeClusterNodePort();
    expect(port).toBeLessThanOrEqual(55_535);
    expect(await listens(port + 10_000)).toBe(true);
  }
});
