import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { redisTarget } from './redis-target.js';

describe('redisTarget', () => {
  it('keeps a one-node URL as a single Redis, TLS and credentials included', () => {
    expect(redisTarget('redis://127.0.0.1:6380')).toEqual({ url: 'redis://127.0.0.1:6380' });
    expect(redisTarget('rediss://user:pw@redis:6380/2')).toEqual({ url: 'rediss://user:pw@redis:6380/2' });
  });

  it('reads a comma-separated node list as the startup nodes of a Redis Cluster', () => {
    expect(redisTarget('redis://a:7000, b:7001,10.0.0.3:7002')).toEqual({
      cluster: {
        startupNodes: [
          { host: 'a', port: 7000 },
          { host: 'b', port: 7001 },
          { host: '10.0.0.3', port: 7002 },
        ],
      },
    });
  });

  it.each(['redis://a:7000,b', 'redis://a:7000,b:0', 'rediss://a:1,b:2', 'redis://u:p@a:1,b:2', 'redis://a:1,b:2/3'])(
    'refuses %s with INVALID_CONFIG',
    (url) => {
      expect(() => redisTarget(url)).toThrow(LedgerlineError);
      expect(() => redisTarget(url)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: ErrorReason.INVALID_CONFIG }),
      );
    },
  );
});
