import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, errors, importPKCS8, importSPKI, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import { LedgerlineError } from '@ledgerline/errors';
import { SecurityReason } from './security-reason.js';

/** Tokens longer than this are refused before they are parsed (a JWT with a role in it is a few hundred bytes). */
export const MAX_TOKEN_CHARS = 8 * 1024;

/** How to check tokens: one kind of key, and the claims every token must carry. */
export interface TokenVerifierSettings {
  /** HS256 shared secret (at least 32 bytes). */
  secret?: string;
  /** PEM (SPKI) public key file: RS256 or ES256 tokens. */
  publicKeyFile?: string;
  /** JWKS file (`{"keys": [...]}`): RS256 or ES256 tokens, the key picked by `kid`. */
  jwksFile?: string;
  /** Required `iss`, when set. */
  issuer?: string;
  /** Required `aud`, when set. */
  audience?: string;
  /** Clock skew allowed on exp and nbf. Default 0. */
  clockToleranceSeconds?: number;
}

const ASYMMETRIC = ['RS256', 'ES256'];

type CryptoKey = Awaited<ReturnType<typeof importSPKI>>;
const MIN_SECRET_BYTES = 32;

function configError(message: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', SecurityReason.AUTH_CONFIG_INVALID, message, {
    ...(cause === undefined ? {} : { cause }),
  });
}

function checkSecret(secret: string): Uint8Array {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw configError(
      `the token secret must be at least ${MIN_SECRET_BYTES} bytes long (HS256); it is ${bytes.length}`,
    );
  }
  return bytes;
}

async function verificationKey(
  settings: TokenVerifierSettings,
): Promise<{ key: Uint8Array | CryptoKey | JWTVerifyGetKey; algorithms: string[] }> {
  const given = [settings.secret, settings.publicKeyFile, settings.jwksFile].filter((value) => value !== undefined);
  if (given.length !== 1) {
    throw configError('authentication needs exactly one of a token secret, a public key file or a JWKS file');
  }
  if (settings.secret !== undefined) return { key: checkSecret(settings.secret), algorithms: ['HS256'] };
  try {
    if (settings.publicKeyFile !== undefined) {
      const pem = readFileSync(settings.publicKeyFile, 'utf8');
      const algorithm = createPublicKey(pem).asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
      return { key: await importSPKI(pem, algorithm), algorithms: [algorithm] };
    }
    const jwks = JSON.parse(readFileSync(settings.jwksFile!, 'utf8')) as Parameters<typeof createLocalJWKSet>[0];
    return { key: createLocalJWKSet(jwks), algorithms: ASYMMETRIC };
  } catch (error) {
    throw configError(`cannot use the token key file: ${(error as Error).message}`, error);
  }
}

function refusal(reason: string, message: string): LedgerlineError {
  return new LedgerlineError('UNAUTHENTICATED', reason, message);
}

/** Turns what jose throws into UNAUTHENTICATED with the reason a client can act on (never echoing the token). */
function tokenError(error: unknown): LedgerlineError {
  if (error instanceof errors.JWTExpired) {
    return refusal(SecurityReason.TOKEN_EXPIRED, 'the token has expired: get a new one (ledgerline tokens create)');
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'nbf') {
    return refusal(SecurityReason.TOKEN_NOT_YET_VALID, 'the token is not valid yet (its nbf is in the future)');
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return refusal(SecurityReason.TOKEN_INVALID, `the token's ${error.claim} claim is not what this cluster accepts`);
  }
  return refusal(
    SecurityReason.TOKEN_INVALID,
    'the token is malformed, or not signed with a key and algorithm this cluster accepts',
  );
}

/** Checks bearer tokens: signature, algorithm, iss, aud, exp and nbf; the role is the `sub` claim. */
export class TokenVerifier {
  private constructor(
    private readonly key: Uint8Array | CryptoKey | JWTVerifyGetKey,
    private readonly algorithms: string[],
    private readonly settings: TokenVerifierSettings,
  ) {}

  static async create(settings: TokenVerifierSettings): Promise<TokenVerifier> {
    const { key, algorithms } = await verificationKey(settings);
    return new TokenVerifier(key, algorithms, settings);
  }

  /** The role the token names; UNAUTHENTICATED with TOKEN_* reasons for anything else. */
  async verify(token: string): Promise<string> {
    if (token.length === 0 || token.length > MAX_TOKEN_CHARS) {
      throw refusal(SecurityReason.TOKEN_INVALID, `the token must be 1 to ${MAX_TOKEN_CHARS} characters long`);
    }
    let subject: unknown;
    try {
      const options = {
        algorithms: this.algorithms,
        ...(this.settings.issuer === undefined ? {} : { issuer: this.settings.issuer }),
        ...(this.settings.audience === undefined ? {} : { audience: this.settings.audience }),
        clockTolerance: this.settings.clockToleranceSeconds ?? 0,
      };
      const { payload } =
        typeof this.key === 'function'
          ? await jwtVerify(token, this.key, options)
          : await jwtVerify(token, this.key, options);
      subject = payload.sub;
    } catch (error) {
      throw tokenError(error);
    }
    if (typeof subject !== 'string' || subject === '') {
      throw refusal(SecurityReason.TOKEN_INVALID, 'the token names no role (its sub claim is empty)');
    }
    return subject;
  }
}

/** What `ledgerline tokens create` needs. */
export interface CreateTokenOptions {
  /** The role (`sub`). */
  subject: string;
  /** HS256 shared secret. */
  secret?: string;
  /** PEM (PKCS#8) private key: RS256 or ES256 (by `algorithm`). */
  privateKeyPem?: string;
  algorithm?: 'RS256' | 'ES256';
  /** `2h`, `30m`, `7d` or seconds; no expiry when absent. */
  expiresIn?: string | number;
  issuer?: string;
  audience?: string;
}

/** Signs a token for `subject` with the secret or the private key. */
export async function createToken(options: CreateTokenOptions): Promise<string> {
  if ((options.secret === undefined) === (options.privateKeyPem === undefined)) {
    throw configError('a token is signed with exactly one of a secret or a private key');
  }
  const algorithm = options.secret !== undefined ? 'HS256' : (options.algorithm ?? 'RS256');
  let key: Uint8Array | CryptoKey;
  try {
    key =
      options.secret !== undefined ? checkSecret(options.secret) : await importPKCS8(options.privateKeyPem!, algorithm);
  } catch (error) {
    if (error instanceof LedgerlineError) throw error;
    throw configError(`cannot use the private key for ${algorithm}: ${(error as Error).message}`, error);
  }
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: algorithm, typ: 'JWT' })
    .setSubject(options.subject)
    .setIssuedAt();
  if (options.expiresIn !== undefined)
    jwt = jwt.setExpirationTime(typeof options.expiresIn === 'number' ? `${options.expiresIn}s` : options.expiresIn);
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  try {
    return await jwt.sign(key);
  } catch (error) {
    throw configError(`cannot sign the token: ${(error as Error).message}`, error);
  }
}
