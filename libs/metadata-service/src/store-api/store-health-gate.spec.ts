import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { StoreHealthGate, type GuardedServer } from './store-health-gate.js';

/** A server that records what the gate did to it. */
function recordingServer(): GuardedServer & { events: string[]; drain: AbortController } {
  const drain = new AbortController();
  const events: string[] = [];
  return {
    events,
    drain,
    draining: drain.signal,
    setServing: (serving) => void events.push(serving ? 'serving' : 'not serving'),
    closeConnections: () => void events.push('goaway'),
  };
}

/** A store whose get fails, hangs or answers as `mode` says. */
function switchableStore() {
  const store = {
    mode: 'up' as 'up' | 'failing' | 'hanging',
    async get(): Promise<undefined> {
      if (store.mode === 'failing') throw new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'down');
      if (store.mode === 'hanging') await new Promise(() => undefined);
      return undefined;
    },
  };
  return store;
}

const quiet = { warn: () => undefined, info: () => undefined };
const SETTINGS = { storeCheckIntervalMs: 100, storeCheckFailures: 2 };

describe('the store health gate of a metadata instance', () => {
  it('stops serving after the failures in a row, sends GOAWAY at each failed try meanwhile, and serves again once the store answers', async () => {
    const store = switchableStore();
    const server = recordingServer();
    const gate = new StoreHealthGate(store, server, SETTINGS, quiet);
    await gate.check();
    store.mode = 'failing';
    await gate.check();
    expect(server.events).toEqual([]);
    await gate.check();
    await gate.check();
    expect(server.events).toEqual(['not serving', 'goaway', 'goaway']);
    expect(gate.serving).toBe(false);
    store.mode = 'up';
    await gate.check();
    expect(server.events).toEqual(['not serving', 'goaway', 'goaway', 'serving']);
    expect(gate.serving).toBe(true);
  });

  it('counts a store that does not answer within the interval as failed (a cut link hangs, it does not refuse)', async () => {
    const store = switchableStore();
    store.mode = 'hanging';
    const server = recordingServer();
    const gate = new StoreHealthGate(store, server, SETTINGS, quiet);
    await gate.check();
    await gate.check();
    expect(server.events).toEqual(['not serving', 'goaway']);
  });

  it('leaves the server alone once its shutdown began', async () => {
    const store = switchableStore();
    store.mode = 'failing';
    const server = recordingServer();
    const gate = new StoreHealthGate(store, server, SETTINGS, quiet);
    gate.start();
    server.drain.abort();
    for (let i = 0; i < 3; i++) await gate.check();
    expect(server.events).toEqual([]);
  });
});
