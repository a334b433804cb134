export { startRedis, startNats, startServerProcess, requireBinary, redisServerSpec } from './server-process.js';
export type { ServerProcess, BinarySpec, StartRedisOptions } from './server-process.js';
export { startRedisCluster } from './redis-cluster.js';
export type { RedisClusterProcess } from './redis-cluster.js';
export { freePort, waitForPort } from './free-port.js';
export { sharedServers, uniqueNamespace, REDIS_URL_ENV, NATS_URL_ENV } from './shared-servers.js';
export type { SharedServers } from './shared-servers.js';
export { WorkerProcess } from './worker-process.js';
export type { WorkerLine } from './worker-process.js';
