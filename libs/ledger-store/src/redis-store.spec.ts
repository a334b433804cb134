import { sharedServers } from '@ledgerline/testing';
import { describeLedgerStoreConformance } from './testing/ledger-store.conformance.js';
import { RedisLedgerStore } from './redis-store.js';

describeLedgerStoreConformance({
  name: 'redis',
  open: (namespace, options) =>
    new RedisLedgerStore({ ...options, url: sharedServers().redisUrl, keyPrefix: `${namespace}:` }),
});
