import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The settings every service shares. A service extends it with its own:
 * `serviceConfigSchema.extend({ redisUrl: z.string() })`.
 */
export const serviceConfigSchema = z.object({
  /** Interface the gRPC server listens on. */
  grpcHost: z.string().min(1).default('0.0.0.0'),
  /** 0 picks a free port. */
  grpcPort: z.number().int().min(0).max(65535).default(6650),
  metricsHost: z.string().min(1).default('0.0.0.0'),
  /** HTTP port of /metrics and /healthz; 0 picks a free port. */
  metricsPort: z.number().int().min(0).max(65535).default(9464),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  /** How long shutdown waits for in-flight calls before cancelling them. */
  drainTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
  /** Largest gRPC message accepted or sent. */
  maxMessageSizeBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(4 * 1024 * 1024),
});

export type ServiceConfig = z.output<typeof serviceConfigSchema>;
