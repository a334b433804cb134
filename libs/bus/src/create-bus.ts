import { invalidArgument, ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { Bus } from './bus.js';
import { InProcessBus, type InProcessBusOptions } from './in-process-bus.js';
import { NatsBus, type NatsBusOptions } from './nats-bus.js';

/** Which bus to run: in-process (standalone) or NATS (cluster). */
export type BusConfig = ({ kind: 'in-process' } & InProcessBusOptions) | ({ kind: 'nats' } & NatsBusOptions);

/**
 * The bus of a cluster service: NATS at a comma-separated list of addresses,
 * started even while no server answers yet (connectInBackground), since
 * notifications are hints and the service converges without them; `warn` is
 * told once when it starts that way.
 */
export function clusterBusConfig(
  natsUrl: string,
  name: string,
  warn: (message: string) => void = (message) => process.stderr.write(`${name}: ${message}\n`),
): BusConfig {
  return {
    kind: 'nats',
    servers: natsUrl.split(',').map((server) => server.trim()),
    name,
    connectInBackground: true,
    onConnectingInBackground: (cause) =>
      warn(
        `${LedgerlineError.from(cause).message}; serving without notifications while NATS is connected in the background`,
      ),
  };
}

/**
 * Builds the bus a configuration names. The NATS bus waits for its first
 * connection (UNAVAILABLE / BUS_UNAVAILABLE after connectTimeoutMs) and then
 * reconnects by itself forever.
 */
export async function createBus(config: BusConfig): Promise<Bus> {
  switch (config?.kind) {
    case 'in-process':
      return new InProcessBus(config);
    case 'nats': {
      const servers = Array.isArray(config.servers) ? config.servers : [config.servers];
      if (servers.length === 0 || servers.some((server) => typeof server !== 'string' || server.length === 0)) {
        throw invalidArgument(
          ErrorReason.INVALID_CONFIG,
          'a NATS bus needs at least one server address (nats://host:port)',
        );
      }
      return NatsBus.connect(config);
    }
    default:
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `the bus kind must be 'in-process' or 'nats', not '${String((config as { kind?: unknown })?.kind)}'`,
      );
  }
}
