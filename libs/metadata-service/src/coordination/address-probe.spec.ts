import { createServer } from 'node:net';
import { parseHostPort, probeAddress } from './address-probe.js';

describe('probeAddress', () => {
  it('says accepted while something listens and refused once nothing does', async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    expect(await probeAddress(`127.0.0.1:${port}`, 1_000)).toBe('accepted');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await probeAddress(`127.0.0.1:${port}`, 1_000)).toBe('refused');
  });

  it('says unknown for an address that is not host:port', async () => {
    expect(await probeAddress('no-port', 100)).toBe('unknown');
    expect(await probeAddress('host:99999', 100)).toBe('unknown');
  });

  it('reads host:port and [v6]:port', () => {
    expect(parseHostPort('writer-0.writers:6650')).toEqual({ host: 'writer-0.writers', port: 6650 });
    expect(parseHostPort('[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(parseHostPort('::1:7000')).toBeUndefined();
  });
});
