// @peculiar/x509 resolves its ASN.1 helpers through tsyringe, which needs the
// Reflect metadata API loaded first (the library's documented set-up).
import 'reflect-metadata';
import { webcrypto, type webcrypto as WebCrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { ServiceIdentity } from '../service-identity.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface PemPair {
  cert: string;
  key: string;
}

export interface DevCertificates {
  ca: PemPair;
  /** One certificate per name asked for: each service's, and the client's. */
  leaves: Record<string, PemPair>;
}

export interface DevCertificateOptions {
  /** Names to issue a certificate for (the subject CN and a DNS SAN). Default: every service and `client`. */
  names?: readonly string[];
  /** Further DNS names or IP addresses every certificate is valid for. Default: localhost, 127.0.0.1, ::1. */
  hosts?: readonly string[];
  /** Default 365. */
  validityDays?: number;
  /** Start of validity; defaults to an hour ago, so a slightly slow clock accepts the certificates. */
  notBefore?: Date;
}

/** Every service's name and the plain client's. */
export const DEV_CERTIFICATE_NAMES: readonly string[] = [...Object.values(ServiceIdentity), 'client'];
const DEFAULT_HOSTS = ['localhost', '127.0.0.1', '::1'];
const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:]*)$/i;

async function keyPair(): Promise<WebCrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as WebCrypto.CryptoKeyPair;
}

async function pemKey(key: WebCrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function serial(): string {
  // Positive 16-byte serial numbers, as RFC 5280 asks.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

/**
 * A development CA and a certificate per name, each valid as a server and as
 * a client (so one file pair serves a service's port and its calls to other
 * services), with the name as subject CN and DNS SAN plus the local hosts.
 * For trying TLS and mutual TLS in minutes; production certificates come from
 * the cluster's own CA.
 */
export async function createDevCertificates(options: DevCertificateOptions = {}): Promise<DevCertificates> {
  const notBefore = options.notBefore ?? new Date(Date.now() - 3_600_000);
  const notAfter = new Date(notBefore.getTime() + (options.validityDays ?? 365) * DAY_MS);
  const caKeys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=Ledgerline development CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const hosts = options.hosts ?? DEFAULT_HOSTS;
  const leaves: Record<string, PemPair> = {};
  for (const name of options.names ?? DEV_CERTIFICATE_NAMES) {
    const keys = await keyPair();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${name}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension([
          { type: 'dns', value: name },
          ...hosts.map((host) =>
            IP.test(host) ? { type: 'ip' as const, value: host } : { type: 'dns' as const, value: host },
          ),
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    leaves[name] = { cert: cert.toString('pem'), key: await pemKey(keys.privateKey) };
  }
  return { ca: { cert: ca.toString('pem'), key: await pemKey(caKeys.privateKey) }, leaves };
}

/** The files writeDevCertificates made, by what they are. */
export interface DevCertificateFiles {
  caCert: string;
  caKey: string;
  /** `<name>.pem` and `<name>-key.pem` per name. */
  leaves: Record<string, { cert: string; key: string }>;
}

/** Writes `ca.pem`, `ca-key.pem`, `<name>.pem` and `<name>-key.pem` into `dir` (keys readable by the owner only). */
export async function writeDevCertificates(dir: string, certificates: DevCertificates): Promise<DevCertificateFiles> {
  await mkdir(dir, { recursive: true });
  const put = async (file: string, text: string, secret: boolean): Promise<string> => {
    const path = join(dir, file);
    await writeFile(path, text, { mode: secret ? 0o600 : 0o644 });
    return path;
  };
  const files: DevCertificateFiles = {
    caCert: await put('ca.pem', certificates.ca.cert, false),
    caKey: await put('ca-key.pem', certificates.ca.key, true),
    leaves: {},
  };
  for (const [name, pair] of Object.entries(certificates.leaves)) {
    files.leaves[name] = {
      cert: await put(`${name}.pem`, pair.cert, false),
      key: await put(`${name}-key.pem`, pair.key, true),
    };
  }
  return files;
}
