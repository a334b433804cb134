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

/**
 * A metadata service beside in-process owners: no background recounts, and an
 * owner whose session ended is swept within a second, so its leases free up
 * while the spec waits.
 */
export const ownersMetadataConfig = () => ({
  ...testServiceConfig(),
  reconcileIntervalMs: 3_600_000,
  recountSettleMs: 30_000,
  ownerSweepIntervalMs: 1000,
});
