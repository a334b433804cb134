import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** auto: human-readable lines when stdout is a terminal, JSON lines otherwise (files, pipes, pods). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

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
  /** How log lines look: auto picks pretty on a terminal and JSON anywhere else; json and pretty force one. */
  logFormat: z.enum(LOG_FORMATS).default('auto'),
  /** How long shutdown waits for in-flight calls before cancelling them. */
  drainTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
  /** Largest gRPC message accepted or sent. */
  maxMessageSizeBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /**
   * PEM certificate chain the gRPC server presents (and, for mutual TLS, the
   * service presents when it calls other services). With its key, the port
   * serves TLS; without both, it serves plaintext (the default).
   */
  tlsCert: z.string().min(1).optional(),
  /** PEM private key of tlsCert. */
  tlsKey: z.string().min(1).optional(),
  /**
   * PEM CA bundle: client certificates are verified against it (mutual TLS;
   * internal APIs then accept only the service identities allowed to call
   * them) and so are the servers this service calls.
   */
  tlsCa: z.string().min(1).optional(),
  /** Refuse at the handshake any client without a certificate from tlsCa (plain SDK clients included). */
  tlsRequireClientCert: z.boolean().default(false),
  /** How often the TLS files are read again, so a rotated secret is used without a restart. */
  tlsReloadIntervalMs: z.number().int().min(100).max(3_600_000).default(5_000),
  /** Require a bearer token (JWT) on every call that does not come from a Ledgerline service certificate. */
  authEnabled: z.boolean().default(false),
  /** HS256 shared secret tokens are checked with (at least 32 bytes). One of the three token keys. */
  authTokenSecret: z.string().min(1).optional(),
  /** PEM public key file for RS256 or ES256 tokens. */
  authPublicKeyFile: z.string().min(1).optional(),
  /** JWKS file for RS256 or ES256 tokens. */
  authJwksFile: z.string().min(1).optional(),
  /** Required `iss` claim. */
  authIssuer: z.string().min(1).optional(),
  /** Required `aud` claim. */
  authAudience: z.string().min(1).optional(),
  /** Comma-separated roles that may do everything. */
  superUserRoles: z.string().default(''),
  /** How long permissions and tenant admin roles are remembered: a grant or revoke takes effect within this bound. */
  authPermissionCacheMs: z.number().int().min(0).max(600_000).default(5_000),
});

export type ServiceConfig = z.output<typeof serviceConfigSchema>;
