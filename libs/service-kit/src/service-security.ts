import { randomBytes } from 'node:crypto';
import { Metadata, type ServerCredentials } from '@grpc/grpc-js';
import type { Authorize, ChannelSettings, ClientOptions } from '@ledgerline/rpc';
import {
  certificateFiles,
  channelCredentials,
  createCallGuard,
  SELF_CALL_HEADER,
  serverCredentials,
  TokenVerifier,
  CachedPolicySource,
  type CertificateFiles,
  type PolicySource,
  type TokenAuthentication,
} from '@ledgerline/security';
import type { Logger } from 'pino';
import type { ServiceMetrics } from './metrics.js';
import type { ServiceConfig } from './service-config.js';

/** A service's transport security, built from its settings. */
export interface ServiceSecurity {
  /** The gRPC server's credentials; undefined serves plaintext. */
  readonly credentials: ServerCredentials | undefined;
  /** The check every call goes through before its handler; undefined when there is none. */
  readonly authorize: Authorize | undefined;
  /**
   * Settings for the channels this service opens to other services: TLS
   * checked against the CA and, for mutual TLS, this service's own
   * certificate as its identity. Empty (plaintext) when TLS is off.
   */
  readonly channel: ChannelSettings;
  /**
   * Client options for calls this process makes to its own port (standalone's
   * writer owner calling its lookup): the channel settings plus a secret only
   * this process knows, so they pass the guard without a token.
   */
  readonly selfClient: ClientOptions;
  /** One line for the start-up log: what is on and what is open. */
  readonly summary: string;
  /** Stops reading the TLS files. */
  close(): void;
}

/**
 * The bearer-token check of a service's auth settings, or undefined when
 * authEnabled is off: what its gRPC guard uses, and what a host that accepts
 * tokens another way (the Kafka gateway's SASL logins) checks them with.
 */
export async function serviceTokenVerifier(config: ServiceConfig): Promise<TokenVerifier | undefined> {
  if (!config.authEnabled) return undefined;
  return TokenVerifier.create({
    ...(config.authTokenSecret === undefined ? {} : { secret: config.authTokenSecret }),
    ...(config.authPublicKeyFile === undefined ? {} : { publicKeyFile: config.authPublicKeyFile }),
    ...(config.authJwksFile === undefined ? {} : { jwksFile: config.authJwksFile }),
    ...(config.authIssuer === undefined ? {} : { issuer: config.authIssuer }),
    ...(config.authAudience === undefined ? {} : { audience: config.authAudience }),
  });
}

async function tokenAuthentication(
  config: ServiceConfig,
  policies: PolicySource | undefined,
): Promise<TokenAuthentication | undefined> {
  const verifier = await serviceTokenVerifier(config);
  if (verifier === undefined) return undefined;
  const superUserRoles = config.superUserRoles
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  return {
    verifier,
    superUserRoles,
    ...(policies === undefined ? {} : { policies: new CachedPolicySource(policies, config.authPermissionCacheMs) }),
  };
}

function summarise(files: CertificateFiles | undefined, config: ServiceConfig): string {
  const auth = config.authEnabled ? 'token authentication on' : 'no authentication';
  if (files === undefined) return `open: plaintext gRPC, ${auth}, internal APIs unrestricted`;
  const { cert, ca } = files.set;
  const parts = [cert === undefined ? 'no server certificate' : 'TLS'];
  if (ca === undefined) parts.push('no client certificates (no CA)');
  else if (config.tlsRequireClientCert) parts.push('mutual TLS required');
  else parts.push('mutual TLS (client certificates verified when given)', 'internal APIs for service identities only');
  parts.push(auth);
  return parts.join(', ');
}

/**
 * TLS from the tlsCert, tlsKey and tlsCa settings: the server's credentials,
 * the internal-API guard when a CA makes mutual TLS possible, bearer-token
 * authentication when authEnabled (with per-namespace permissions read from
 * `policies`, remembered for authPermissionCacheMs), and the settings of
 * outgoing channels.
 * Rotated files are picked up every tlsReloadIntervalMs. With no TLS or auth
 * setting, everything stays open.
 */
export async function serviceSecurity(
  config: ServiceConfig,
  logger: Logger,
  metrics: ServiceMetrics,
  policies?: PolicySource,
): Promise<ServiceSecurity> {
  const authentication = await tokenAuthentication(config, policies);
  const files = certificateFiles(
    {
      ...(config.tlsCert === undefined ? {} : { certFile: config.tlsCert }),
      ...(config.tlsKey === undefined ? {} : { keyFile: config.tlsKey }),
      ...(config.tlsCa === undefined ? {} : { caFile: config.tlsCa }),
    },
    {
      reloadIntervalMs: config.tlsReloadIntervalMs,
      onReload: (paths) => logger.info({ files: paths }, 'TLS certificates reloaded'),
      onReloadFailed: (error) =>
        logger.warn({ err: error }, 'TLS files changed but cannot be used yet; keeping the previous ones'),
    },
  );
  const serving = files !== undefined && files.set.cert !== undefined;
  const selfCallSecret = randomBytes(32).toString('base64url');
  const guard = createCallGuard({
    selfCallSecret,
    mutualTls: serving && files.set.ca !== undefined,
    ...(authentication === undefined ? {} : { authentication }),
    onRefused: (call, error) => {
      metrics.onRefused(call.method, error.reason);
      logger.warn({ method: call.method, peer: call.peer, reason: error.reason }, 'call refused');
    },
  });
  const channel: ChannelSettings = files === undefined ? {} : { credentials: channelCredentials(files) };
  const selfMetadata = new Metadata();
  selfMetadata.set(SELF_CALL_HEADER, selfCallSecret);
  return {
    credentials: serving
      ? serverCredentials(files, { requireClientCertificate: config.tlsRequireClientCert })
      : undefined,
    authorize: guard,
    channel,
    selfClient: { ...channel, defaultMetadata: selfMetadata },
    summary: summarise(files, config),
    close: () => files?.close(),
  };
}

/** Channel settings for calls to other services, and a close that stops watching the TLS files. */
export interface ServiceChannel {
  readonly settings: ChannelSettings;
  close(): void;
}

/**
 * Channel settings from a service's TLS settings, for clients made before the
 * service serves (a cluster owner's metadata client): TLS checked against
 * tlsCa, presenting tlsCert as the service's identity, following rotations.
 * Plaintext when no TLS file is configured.
 */
export function serviceChannel(config: ServiceConfig): ServiceChannel {
  const files = certificateFiles(
    {
      ...(config.tlsCert === undefined ? {} : { certFile: config.tlsCert }),
      ...(config.tlsKey === undefined ? {} : { keyFile: config.tlsKey }),
      ...(config.tlsCa === undefined ? {} : { caFile: config.tlsCa }),
    },
    { reloadIntervalMs: config.tlsReloadIntervalMs },
  );
  if (files === undefined) return { settings: {}, close: () => undefined };
  return { settings: { credentials: channelCredentials(files) }, close: () => files.close() };
}
