export { ServiceIdentity, serviceIdentities, certificateNames } from './service-identity.js';
export { SecurityReason } from './security-reason.js';
export { CertificateFiles, MIN_TLS_RELOAD_INTERVAL_MS } from './certificate-files.js';
export type { TlsFiles, CertificateSet, CertificateFilesOptions } from './certificate-files.js';
export { serverCredentials, channelCredentials, certificateFiles } from './tls-credentials.js';
export type { ServerTlsOptions } from './tls-credentials.js';
export { INTERNAL_API_CALLERS, internalApiCallers, checkInternalCall } from './internal-apis.js';
export { createCallGuard } from './call-guard.js';
export type { CallGuard, CallGuardOptions, GuardedCall } from './call-guard.js';
