import { ErrorReason, invalidArgument } from '@ledgerline/errors';

/** One Redis (`url`) or a Redis Cluster (`cluster.startupNodes`), as the stores take them. */
export type RedisTarget = { url: string } | { cluster: { startupNodes: { host: string; port: number }[] } };

/**
 * Reads a service's Redis setting. `redis://host:port` is one Redis;
 * `redis://host1:port1,host2:port2,...` lists the nodes of a Redis Cluster to
 * discover it from (the way LEDGERLINE_NATS_URL lists NATS servers), so one
 * setting per service covers both and a deployment switches to a Cluster by
 * listing its masters. A malformed list is INVALID_ARGUMENT / INVALID_CONFIG.
 */
export function redisTarget(url: string): RedisTarget {
  const match = /^(rediss?):\/\/([^/?#]*)(.*)$/.exec(url);
  if (match === null || !match[2]!.includes(',')) return { url };
  const [, scheme, hosts, rest] = match;
  if (scheme !== 'redis' || rest !== '' || hosts!.includes('@')) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      `a Redis Cluster is given as redis://host:port,host:port,... (no TLS, credentials or path), not '${url}'`,
    );
  }
  const startupNodes = hosts!.split(',').map((node) => {
    const nodeMatch = /^([^:\s]+):(\d{1,5})$/.exec(node.trim());
    const port = Number(nodeMatch?.[2]);
    if (nodeMatch === null || port < 1 || port > 65_535) {
      throw invalidArgument(ErrorReason.INVALID_CONFIG, `'${node}' in '${url}' is not host:port`);
    }
    return { host: nodeMatch[1]!, port };
  });
  return { cluster: { startupNodes } };
}
