import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { LedgerlineError } from '@ledgerline/errors';
import { createDevCertificates, type DevCertificates } from './dev-certificates/index.js';
import { CertificateFiles } from './certificate-files.js';
import { checkInternalCall, internalApiCallers } from './internal-apis.js';
import { SecurityReason } from './security-reason.js';
import { serviceIdentities } from './service-identity.js';

describe('CertificateFiles', () => {
  let dir: string;
  let first: DevCertificates;
  let second: DevCertificates;
  const paths = { certFile: '', keyFile: '', caFile: '' };

  beforeAll(async () => {
    [first, second] = await Promise.all([
      createDevCertificates({ names: ['metadata'] }),
      createDevCertificates({ names: ['metadata'] }),
    ]);
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledgerline-files-'));
    Object.assign(paths, {
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      caFile: join(dir, 'ca.crt'),
    });
    await writeFile(paths.certFile, first.leaves['metadata']!.cert);
    await writeFile(paths.keyFile, first.leaves['metadata']!.key);
    await writeFile(paths.caFile, first.ca.cert);
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the previous set while a rotation is half written, and takes the new one once it goes together', async () => {
    const failures: LedgerlineError[] = [];
    const files = new CertificateFiles(paths, {
      reloadIntervalMs: 60_000,
      onReloadFailed: (error) => failures.push(error),
    });
    try {
      const before = files.set.cert!;
      await writeFile(paths.certFile, second.leaves['metadata']!.cert);
      expect(await files.reload()).toBe(false);
      expect(files.set.cert!.equals(before)).toBe(true);
      expect(failures.map((error) => error.reason)).toEqual([SecurityReason.TLS_FILES_INVALID]);
      await writeFile(paths.keyFile, second.leaves['metadata']!.key);
      expect(await files.reload()).toBe(true);
      expect(files.set.cert!.toString()).toBe(second.leaves['metadata']!.cert);
      expect(await files.reload()).toBe(false);
    } finally {
      files.close();
    }
  });

  it('fails at start-up naming a missing file, and refuses a certificate without its key', () => {
    expect(
      () => new CertificateFiles({ ...paths, caFile: join(dir, 'missing.pem') }, { reloadIntervalMs: 1000 }),
    ).toThrow(
      expect.objectContaining({
        reason: SecurityReason.TLS_FILES_INVALID,
        message: expect.stringContaining('missing.pem'),
      }),
    );
    expect(() => new CertificateFiles({ certFile: paths.certFile }, { reloadIntervalMs: 1000 })).toThrow(
      expect.objectContaining({ reason: SecurityReason.TLS_CONFIG_INVALID }),
    );
  });
});

describe('service identities and internal APIs', () => {
  const certificate = (subjectaltname: string, CN: string): PeerCertificate =>
    ({ subject: { CN }, subjectaltname }) as unknown as PeerCertificate;

  it('reads the identity from the CN, a DNS SAN or a SPIFFE URI SAN', async () => {
    const made = await createDevCertificates({ names: ['garbage-collector'] });
    const x509 = new X509Certificate(made.leaves['garbage-collector']!.cert);
    expect(serviceIdentities(certificate(x509.subjectAltName!, 'x'))).toEqual(['garbage-collector']);
    expect(serviceIdentities(certificate('URI:spiffe://cluster.local/readonly-owner', 'someone'))).toEqual([
      'readonly-owner',
    ]);
    expect(serviceIdentities(certificate('DNS:localhost', 'client'))).toEqual([]);
  });

  it('lists the internal APIs and who may call each', () => {
    expect(internalApiCallers('/ledgerline.v1.MetadataStoreService/Put')).toContain('garbage-collector');
    expect(internalApiCallers('/ledgerline.v1.LookupService/AllocateLedgerId')).toEqual(['writer-owner']);
    expect(internalApiCallers('/ledgerline.v1.LookupService/LookupTopic')).toBeUndefined();
    expect(internalApiCallers('/ledgerline.v1.TopicsService/Publish')).toBeUndefined();
    expect(() =>
      checkInternalCall('/ledgerline.v1.LookupService/AllocateLedgerId', certificate('', 'readonly-owner')),
    ).toThrow(expect.objectContaining({ code: 'PERMISSION_DENIED', reason: SecurityReason.SERVICE_NOT_ALLOWED }));
    expect(() =>
      checkInternalCall('/ledgerline.v1.CursorsService/GetCursor', certificate('', 'readonly-owner')),
    ).not.toThrow();
  });
});
