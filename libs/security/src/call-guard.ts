import { timingSafeEqual } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { LedgerlineError } from '@ledgerline/errors';
import { checkInternalCall, internalApiCallers } from './internal-apis.js';
import { SecurityReason } from './security-reason.js';
import { serviceIdentities } from './service-identity.js';
import type { TokenVerifier } from './tokens.js';
import { authorizeRole, type PolicySource } from './authorization.js';
import { requiredAccess } from './method-access.js';

/** What the guard needs to know about a call (a subset of the RPC layer's CallContext). */
export interface GuardedCall {
  readonly method: string;
  readonly peer: string;
  readonly peerCertificate?: PeerCertificate;
  readonly metadata: { get(key: string): unknown[] };
}

export interface TokenAuthentication {
  verifier: TokenVerifier;
  /** Roles that may do everything (Pulsar's superUserRoles). */
  superUserRoles: readonly string[];
  /**
   * Where namespace permissions and tenant admin roles are read (cached, see
   * CachedPolicySource); without one only super-users pass checks that need them.
   */
  policies?: PolicySource;
}

export interface CallGuardOptions {
  /**
   * Mutual TLS is on (the server has a CA to verify client certificates):
   * internal APIs then accept only the service identities allowed to call them.
   */
  mutualTls: boolean;
  /** Bearer-token authentication; off when absent. */
  authentication?: TokenAuthentication;
  /**
   * A random secret known only to this process: a call carrying it in
   * SELF_CALL_HEADER comes from the process itself (standalone's writer owner
   * calling its own lookup over loopback) and is trusted like a service.
   */
  selfCallSecret?: string;
  /** Told of every refused call, for a metric and a log line (never the token). */
  onRefused?: (call: GuardedCall, error: LedgerlineError) => void;
}

/** The metadata key of the process-local secret (see CallGuardOptions.selfCallSecret). */
export const SELF_CALL_HEADER = 'ledgerline-self-call';

function isSelfCall(call: GuardedCall, secret: string | undefined): boolean {
  if (secret === undefined) return false;
  const value = call.metadata.get(SELF_CALL_HEADER)[0];
  if (typeof value !== 'string' || value.length !== secret.length) return false;
  return timingSafeEqual(Buffer.from(value), Buffer.from(secret));
}

export type CallGuard = (call: GuardedCall, request: unknown) => Promise<void> | void;

/** The bearer token of a call, or undefined. */
export function bearerToken(call: GuardedCall): string | undefined {
  const value = call.metadata.get('authorization')[0];
  if (typeof value !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

async function authenticate(call: GuardedCall, authentication: TokenAuthentication): Promise<string> {
  const token = bearerToken(call);
  if (token === undefined) {
    throw new LedgerlineError(
      'UNAUTHENTICATED',
      SecurityReason.TOKEN_MISSING,
      'this cluster requires a bearer token: pass --token (CLI) or token (SDK), or set LEDGERLINE_TOKEN',
    );
  }
  return authentication.verifier.verify(token);
}

async function checkRole(call: GuardedCall, request: unknown, role: string, authentication: TokenAuthentication) {
  if (internalApiCallers(call.method) !== undefined) {
    if (authentication.superUserRoles.includes(role)) return;
    throw new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.SERVICE_NOT_ALLOWED,
      `${call.method} is an internal API: role ${role} is not a super-user and presented no service certificate`,
      { details: { method: call.method, role } },
    );
  }
  const accesses = requiredAccess(call.method, request);
  await authorizeRole(role, accesses, authentication.superUserRoles, authentication.policies);
}

async function check(call: GuardedCall, request: unknown, options: CallGuardOptions): Promise<void> {
  if (isSelfCall(call, options.selfCallSecret)) return;
  // A verified Ledgerline service certificate is the caller's identity: services act for clients already checked.
  const isService = options.mutualTls && serviceIdentities(call.peerCertificate).length > 0;
  if (options.mutualTls && (isService || options.authentication === undefined)) {
    checkInternalCall(call.method, call.peerCertificate);
  }
  if (options.authentication === undefined) return;
  // A service acting for itself carries no token. One acting for a client (the Kafka gateway) forwards the
  // client's token, and the client's rights then decide, as they would on a call of its own; internal APIs
  // stay decided by the service's identity alone, since no client role may call them.
  if (isService && (bearerToken(call) === undefined || internalApiCallers(call.method) !== undefined)) return;
  const role = await authenticate(call, options.authentication);
  await checkRole(call, request, role, options.authentication);
}

/**
 * The check every call goes through before its handler, or undefined when
 * there is nothing to check (security off: the default, so standalone and
 * development stay open).
 */
export function createCallGuard(options: CallGuardOptions): CallGuard | undefined {
  if (!options.mutualTls && options.authentication === undefined) return undefined;
  return async (call, request) => {
    try {
      await check(call, request, options);
    } catch (error) {
      if (error instanceof LedgerlineError) options.onRefused?.(call, error);
      throw error;
    }
  };
}
