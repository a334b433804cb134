import { Command, Redis } from 'ioredis';
import { sharedServers } from '@ledgerline/testing';
import {
  argumentBytes,
  MIN_PAYLOAD_BYTES_PER_SECOND,
  PAYLOAD_DEADLINE_THRESHOLD_BYTES,
  payloadAllowanceMs,
  scalePayloadDeadlines,
} from './payload-deadline.js';

describe('payload deadlines', () => {
  it('adds nothing below the threshold and a second per MIN_PAYLOAD_BYTES_PER_SECOND above it', () => {
    expect(payloadAllowanceMs(PAYLOAD_DEADLINE_THRESHOLD_BYTES - 1)).toBe(0);
    expect(payloadAllowanceMs(MIN_PAYLOAD_BYTES_PER_SECOND)).toBe(1000);
    expect(payloadAllowanceMs(64 * MIN_PAYLOAD_BYTES_PER_SECOND)).toBe(64_000);
  });

  it('counts strings by their UTF-8 bytes and buffers by their length', () => {
    expect(argumentBytes(['ab', 'é', Buffer.alloc(10), 7])).toBe(2 + 2 + 10);
  });

  it('sets the grown deadline on a large command before the client sets its flat one', () => {
    const seen: number[] = [];
    const fakeClient = {
      // What ioredis does when a command reaches a connection: set the flat commandTimeout.
      sendCommand: (command: Command) => command.setTimeout(5),
    };
    scalePayloadDeadlines(fakeClient as unknown as Redis, 5);
    for (const size of [10, 4 * MIN_PAYLOAD_BYTES_PER_SECOND]) {
      const command = new Command('set', ['key', Buffer.alloc(size)]);
      jest.spyOn(command, 'setTimeout').mockImplementation((ms: number) => void seen.push(ms));
      (fakeClient.sendCommand as (command: Command) => void)(command);
    }
    expect(seen).toEqual([
      5,
      5 + payloadAllowanceMs(argumentBytes(['key', Buffer.alloc(4 * MIN_PAYLOAD_BYTES_PER_SECOND)])),
      5,
    ]);
  });

  it('lets a large command through a flat deadline it could not meet', async () => {
    // A flat 1 ms command timeout fails any real command; the scaled one must not apply to the small PING
    // but must let a 2 MiB SET through.
    const client = new Redis(sharedServers().redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      // Only now: the handshake's own commands would not meet 1 ms either.
      client.options.commandTimeout = 1;
      scalePayloadDeadlines(client, 1);
      const large = Buffer.alloc(2 * MIN_PAYLOAD_BYTES_PER_SECOND, 7);
      await expect(client.set(`payload-deadline-${process.pid}`, large, 'PX', 5000)).resolves.toBe('OK');
    } finally {
      client.disconnect();
    }
  });
});
