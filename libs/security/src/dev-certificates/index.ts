// Development certificates, loaded apart from the main entry so services never load the X.509 generator.
export { createDevCertificates, writeDevCertificates, DEV_CERTIFICATE_NAMES } from './dev-certificates.js';
export type { DevCertificates, DevCertificateFiles, DevCertificateOptions, PemPair } from './dev-certificates.js';
