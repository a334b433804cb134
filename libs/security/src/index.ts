export { ServiceIdentity, serviceIdentities, certificateNames } from './service-identity.js';
export { SecurityReason } from './security-reason.js';
export { CertificateFiles, MIN_TLS_RELOAD_INTERVAL_MS, contextOptions } from './certificate-files.js';
export type { TlsFiles, CertificateSet, CertificateFilesOptions } from './certificate-files.js';
export { serverCredentials, channelCredentials, certificateFiles } from './tls-credentials.js';
export type { ServerTlsOptions } from './tls-credentials.js';
export { INTERNAL_API_CALLERS, internalApiCallers, checkInternalCall } from './internal-apis.js';
export { createCallGuard, bearerToken, SELF_CALL_HEADER } from './call-guard.js';
export type { CallGuard, CallGuardOptions, GuardedCall, TokenAuthentication } from './call-guard.js';
export { TokenVerifier, createToken, MAX_TOKEN_CHARS } from './tokens.js';
export type { TokenVerifierSettings, CreateTokenOptions } from './tokens.js';
export {
  CachedPolicySource,
  authorizeRole,
  DEFAULT_PERMISSION_CACHE_MS,
  MAX_CACHED_POLICIES,
} from './authorization.js';
export type { AuthPolicies, PolicySource } from './authorization.js';
export { requiredAccess } from './method-access.js';
export type { Access, AuthActionName } from './method-access.js';
export { grpcPolicySource } from './grpc-policy-source.js';
