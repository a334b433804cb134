/**
 * The servers the Jest global setup started for this test run. Tests that only
 * need a Redis or NATS to talk to use these; tests that kill or restart a
 * server start their own with startRedis / startNats.
 */
export interface SharedServers {
  redisUrl: string;
  natsUrl: string;
}

export const REDIS_URL_ENV = 'LEDGERLINE_TEST_REDIS_URL';
export const NATS_URL_ENV = 'LEDGERLINE_TEST_NATS_URL';

export function sharedServers(): SharedServers {
  const redisUrl = process.env[REDIS_URL_ENV];
  const natsUrl = process.env[NATS_URL_ENV];
  if (redisUrl === undefined || natsUrl === undefined) {
    throw new Error(`${REDIS_URL_ENV} and ${NATS_URL_ENV} are unset: run the tests with 'npm test'.`);
  }
  return { redisUrl, natsUrl };
}

/** A key prefix or subject prefix unique to one test file, so files never see each other's data. */
export function uniqueNamespace(label: string): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
