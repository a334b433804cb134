import { serviceConfigSchema } from '@ledgerline/service-kit';

/** A service on loopback with any free gRPC and metrics ports, silent, draining within 5 s. */
export const testServiceConfig = () =>
  serviceConfigSchema.parse({
    grpcHost: '127.0.0.1',
    grpcPort: 0,
    metricsHost: '127.0.0.1',
    metricsPort: 0,
    logLevel: 'silent',
    drainTimeoutMs: 5_000,
  });
