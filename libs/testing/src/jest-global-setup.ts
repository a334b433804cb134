// Jest loads global setup outside its module mapper, so these imports carry no .js suffix.
import { startNats, startRedis, type ServerProcess } from './server-process';
import { NATS_URL_ENV, REDIS_URL_ENV } from './shared-servers';

declare global {
  var __ledgerlineServers: ServerProcess[] | undefined;
}

/** Starts one throwaway redis-server and nats-server for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const redis = await startRedis();
  const nats = await startNats();
  globalThis.__ledgerlineServers = [redis, nats];
  process.env[REDIS_URL_ENV] = redis.url;
  process.env[NATS_URL_ENV] = nats.url;
}
