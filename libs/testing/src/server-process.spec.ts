import { createConnection } from 'node:net';
import { sharedServers, startRedis } from './index.js';

function ping(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().trim());
    });
    socket.once('error', reject);
  });
}

describe('throwaway servers', () => {
  it('exports the shared servers to the workers, never on the default ports', () => {
    const { redisUrl, natsUrl } = sharedServers();
    expect(redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(natsUrl).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    expect(redisUrl).not.toContain(':6379');
    expect(natsUrl).not.toContain(':4222');
  });

  it('kills and restarts a private redis-server on the same port', async () => {
    const redis = await startRedis();
    try {
      expect(await ping(redis.port)).toBe('+PONG');
      await redis.kill();
      await expect(ping(redis.port)).rejects.toThrow();
      await redis.restart();
      expect(await ping(redis.port)).toBe('+PONG');
    } finally {
      await redis.stop();
    }
  });
});
