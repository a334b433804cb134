import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { SecurityReason } from './security-reason.js';
import { createToken, MAX_TOKEN_CHARS, TokenVerifier } from './tokens.js';

const SECRET = 'a-development-secret-of-at-least-32-bytes';
const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

async function refusal(verifier: TokenVerifier, token: string): Promise<LedgerlineError> {
  try {
    await verifier.verify(token);
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('the token was accepted');
}

describe('tokens', () => {
  let verifier: TokenVerifier;
  beforeAll(async () => {
    verifier = await TokenVerifier.create({ secret: SECRET, issuer: 'ledgerline', audience: 'cluster-a' });
  });

  it('accepts a token it issued and names its role', async () => {
    const token = await createToken({ subject: 'app-1', secret: SECRET, issuer: 'ledgerline', audience: 'cluster-a' });
    await expect(verifier.verify(token)).resolves.toBe('app-1');
  });

  it('refuses expired, not-yet-valid and wrong-audience tokens with reasons a client can act on', async () => {
    const expired = await createToken({
      subject: 'a',
      secret: SECRET,
      issuer: 'ledgerline',
      audience: 'cluster-a',
      expiresIn: -10,
    });
    expect(await refusal(verifier, expired)).toMatchObject({
      code: 'UNAUTHENTICATED',
      reason: SecurityReason.TOKEN_EXPIRED,
    });
    const key = new TextEncoder().encode(SECRET);
    const { SignJWT } = await import('jose');
    const later = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('a')
      .setIssuer('ledgerline')
      .setAudience('cluster-a')
      .setNotBefore(Math.floor(Date.now() / 1000) + 3600)
      .sign(key);
    expect(await refusal(verifier, later)).toMatchObject({
      code: 'UNAUTHENTICATED',
      reason: SecurityReason.TOKEN_NOT_YET_VALID,
    });
    const otherAudience = await createToken({
      subject: 'a',
      secret: SECRET,
      issuer: 'ledgerline',
      audience: 'cluster-b',
    });
    const error = await refusal(verifier, otherAudience);
    expect(error).toMatchObject({ code: 'UNAUTHENTICATED', reason: SecurityReason.TOKEN_INVALID });
    expect(error.message).toContain('aud');
    const otherSecret = await createToken({
      subject: 'a',
      secret: `${SECRET}-other`,
      issuer: 'ledgerline',
      audience: 'cluster-a',
    });
    expect((await refusal(verifier, otherSecret)).reason).toBe(SecurityReason.TOKEN_INVALID);
  });

  it('refuses alg none, truncated, huge and wrong-algorithm tokens', async () => {
    const none = `${base64url({ alg: 'none' })}.${base64url({ sub: 'root', iss: 'ledgerline', aud: 'cluster-a' })}.`;
    expect((await refusal(verifier, none)).reason).toBe(SecurityReason.TOKEN_INVALID);
    const good = await createToken({ subject: 'a', secret: SECRET, issuer: 'ledgerline', audience: 'cluster-a' });
    expect((await refusal(verifier, good.slice(0, good.length - 5))).reason).toBe(SecurityReason.TOKEN_INVALID);
    expect((await refusal(verifier, 'x'.repeat(MAX_TOKEN_CHARS + 1))).reason).toBe(SecurityReason.TOKEN_INVALID);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs256 = await createToken({
      subject: 'a',
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      issuer: 'ledgerline',
      audience: 'cluster-a',
    });
    expect((await refusal(verifier, rs256)).reason).toBe(SecurityReason.TOKEN_INVALID);
  });

  // Mutations stay in the signed part: a changed last base64url character of a signature can decode to the same bytes.
  it('answers UNAUTHENTICATED to any malformed token (fuzz)', async () => {
    const good = await createToken({ subject: 'a', secret: SECRET, issuer: 'ledgerline', audience: 'cluster-a' });
    const mangled = fc.oneof(
      fc.string({ maxLength: 2000 }),
      fc.nat({ max: good.length - 1 }).map((cut) => good.slice(0, cut)),
      fc
        .tuple(fc.nat({ max: good.lastIndexOf('.') - 1 }), fc.string({ minLength: 1, maxLength: 1 }))
        .map(([at, c]) => `${good.slice(0, at)}${c}${good.slice(at + 1)}`)
        .filter((t) => t !== good),
      fc
        .record({ alg: fc.constantFrom('none', 'HS512', 'RS256', 'ES256', 'HS256', ''), sub: fc.string() })
        .map(
          ({ alg, sub }) =>
            `${base64url({ alg })}.${base64url({ sub, iss: 'ledgerline', aud: 'cluster-a' })}.${base64url({})}`,
        ),
    );
    await fc.assert(
      fc.asyncProperty(mangled, async (token) => {
        const error = await refusal(verifier, token);
        expect(error.code).toBe('UNAUTHENTICATED');
      }),
      { numRuns: 300 },
    );
  });

  it('checks ES256 tokens against a public key file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledgerline-jwt-'));
    try {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const file = join(dir, 'public.pem');
      await writeFile(file, publicKey.export({ type: 'spki', format: 'pem' }));
      const es = await TokenVerifier.create({ publicKeyFile: file });
      const token = await createToken({
        subject: 'ops',
        algorithm: 'ES256',
        privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      });
      await expect(es.verify(token)).resolves.toBe('ops');
      expect((await refusal(es, await createToken({ subject: 'a', secret: SECRET }))).reason).toBe(
        SecurityReason.TOKEN_INVALID,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('checks RS256 tokens against a JWKS file, picking the key by kid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledgerline-jwks-'));
    try {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const file = join(dir, 'jwks.json');
      await writeFile(
        file,
        JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
      );
      const verifier = await TokenVerifier.create({ jwksFile: file, audience: 'cluster-a' });
      const { SignJWT, importPKCS8 } = await import('jose');
      const key = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
      const sign = (kid: string) =>
        new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid }).setSubject('svc').setAudience('cluster-a').sign(key);
      await expect(verifier.verify(await sign('k1'))).resolves.toBe('svc');
      expect((await refusal(verifier, await sign('k2'))).reason).toBe(SecurityReason.TOKEN_INVALID);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a secret too short to be safe', async () => {
    await expect(TokenVerifier.create({ secret: 'short' })).rejects.toMatchObject({
      reason: SecurityReason.AUTH_CONFIG_INVALID,
    });
  });
});
