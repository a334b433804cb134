import type { MessageInitShape } from '@bufbuild/protobuf';
import type { WhoAmIResponseSchema } from '@ledgerline/proto';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';

/**
 * Who the caller is. Answered without a token so a browser learns whether to
 * ask for one; a token that is sent and fails verification is refused
 * UNAUTHENTICATED with the verifier's reason (expired, bad signature), so the
 * browser asks again rather than showing empty pages.
 */
export async function whoAmI(
  context: ConsoleContext,
  caller: Caller,
): Promise<MessageInitShape<typeof WhoAmIResponseSchema>> {
  const base = {
    authEnabled: context.tokenVerifier !== undefined,
    consoleVersion: context.version,
    mode: context.mode,
    kafkaEnabled: context.backends.kafkaAddress !== undefined,
    collectorEnabled: context.backends.collector !== undefined,
  };
  if (context.tokenVerifier === undefined) return { ...base, authenticated: true, superUser: true };
  if (caller.token === undefined) return { ...base, authenticated: false };
  const role = await context.tokenVerifier.verify(caller.token);
  return {
    ...base,
    authenticated: true,
    role,
    superUser: context.superUserRoles.includes(role),
    expiresAtMs: BigInt(tokenExpiryMs(caller.token)),
  };
}

/** The `exp` claim of a verified JWT, in ms; 0 when it has none. */
function tokenExpiryMs(token: string): number {
  const payload = token.split('.')[1];
  if (payload === undefined) return 0;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : 0;
  } catch {
    return 0;
  }
}
