import { connect } from 'node:net';

/**
 * What a connection attempt to an owner's advertised address says about its
 * process: `accepted` (something listens there: alive, or stopped with its
 * socket still open, which the kernel accepts for it), `refused` (the host
 * answered that nothing listens on the port: the process is gone), or
 * `unknown` (no answer in time, no route, a bad address: slow or cut off,
 * which says nothing about the process).
 */
export type ProbeVerdict = 'accepted' | 'refused' | 'unknown';

export type AddressProbe = (address: string, timeoutMs: number) => Promise<ProbeVerdict>;

/** host:port or [v6 host]:port; undefined when the address is neither. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

function refusedEverywhere(error: NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] }): boolean {
  // With several addresses for the host (localhost: ::1 and 127.0.0.1) Node reports an AggregateError.
  if (error.errors !== undefined && error.errors.length > 0)
    return error.errors.every((each) => each.code === 'ECONNREFUSED');
  return error.code === 'ECONNREFUSED';
}

/**
 * Opens a TCP connection to `address` and closes it at once. This is the
 * transport step of a gRPC health check, and the only step whose failure
 * proves the process is gone: a refused connection is the peer's kernel
 * answering that no socket listens on the port, while a health check that
 * connects but does not answer may be a stopped or overloaded process.
 */
export const probeAddress: AddressProbe = (address, timeoutMs) => {
  const target = parseHostPort(address);
  if (target === undefined) return Promise.resolve('unknown');
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port });
    const finish = (verdict: ProbeVerdict): void => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => finish('unknown'), timeoutMs);
    socket.once('connect', () => finish('accepted'));
    socket.once('error', (error) => finish(refusedEverywhere(error) ? 'refused' : 'unknown'));
  });
};
