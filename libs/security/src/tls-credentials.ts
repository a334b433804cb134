import { credentials, experimental, ServerCredentials, type ChannelCredentials } from '@grpc/grpc-js';
import { CertificateFiles, contextOptions, type CertificateFilesOptions, type TlsFiles } from './certificate-files.js';

/** Server credentials whose certificate, key and trusted CA follow a CertificateFiles. */
class ReloadingServerCredentials extends ServerCredentials {
  constructor(files: CertificateFiles, requireClientCertificate: boolean) {
    super(
      {
        // With a CA, clients are asked for a certificate; only a verified one gives an identity.
        requestCert: files.set.ca !== undefined,
        // Required: a client without a certificate from the CA is refused at the handshake.
        rejectUnauthorized: requireClientCertificate,
      },
      contextOptions(files.set),
    );
    // Connections accepted after a rotation use the new set; open ones keep theirs.
    files.onChange((set) => this.updateSecureContextOptions(contextOptions(set)));
  }

  override _equals(other: ServerCredentials): boolean {
    return this === other;
  }
}

export interface ServerTlsOptions {
  /**
   * Refuse, at the handshake, any client without a certificate from the CA.
   * Off, a client certificate is still asked for and verified (and gives the
   * service identity), but plain clients (SDK users with a token) connect.
   */
  requireClientCertificate: boolean;
}

/** TLS server credentials that pick up rotated files without a restart. */
export function serverCredentials(files: CertificateFiles, options: ServerTlsOptions): ServerCredentials {
  return new ReloadingServerCredentials(files, options.requireClientCertificate && files.set.ca !== undefined);
}

/**
 * TLS channel credentials. With a CA file the server is checked against it
 * and, with a certificate and key, the channel presents them (mutual TLS),
 * both following rotations; without a CA file the system's roots are used.
 */
export function channelCredentials(files: CertificateFiles): ChannelCredentials {
  const { cert, key, ca } = files.set;
  if (ca === undefined) return credentials.createSsl(null, key ?? null, cert ?? null);
  return experimental.createCertificateProviderChannelCredentials(files, cert === undefined ? null : files);
}

/** CertificateFiles for `files`, or undefined when no file is named (TLS off). */
export function certificateFiles(files: TlsFiles, options: CertificateFilesOptions): CertificateFiles | undefined {
  if (files.certFile === undefined && files.keyFile === undefined && files.caFile === undefined) return undefined;
  return new CertificateFiles(files, options);
}
