import { advertisedBroker, derivedNodeId } from './gateway-server.js';

describe('the broker a gateway advertises', () => {
  it('takes the advertised host and port, or the bound ones (localhost for a wildcard)', () => {
    expect(advertisedBroker(3, '10.1.2.3:19092', '0.0.0.0', 9092)).toEqual({
      nodeId: 3,
      host: '10.1.2.3',
      port: 19092,
    });
    expect(advertisedBroker(3, 'kafka.example', '0.0.0.0', 9092)).toEqual({
      nodeId: 3,
      host: 'kafka.example',
      port: 9092,
    });
    expect(advertisedBroker(1, '', '0.0.0.0', 9093)).toEqual({ nodeId: 1, host: 'localhost', port: 9093 });
    expect(advertisedBroker(1, '', '127.0.0.1', 9093)).toEqual({ nodeId: 1, host: '127.0.0.1', port: 9093 });
  });

  it('derives a broker id from the advertised address for node id 0, so pods sharing their settings differ', () => {
    // The pods of one Deployment: the same settings, each its own pod IP.
    const ids = Array.from(
      { length: 50 },
      (_, i) => advertisedBroker(0, `10.244.0.${i + 2}:9092`, '0.0.0.0', 9092).nodeId,
    );
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id >= 1 && id <= 2_147_483_647 && Number.isInteger(id)).toBe(true);
    // The same address keeps its id (a client that reconnects finds the same broker).
    expect(advertisedBroker(0, '10.244.0.2:9092', '0.0.0.0', 9092).nodeId).toBe(ids[0]);
    expect(derivedNodeId('10.244.0.2', 9092)).toBe(ids[0]);
  });
});
