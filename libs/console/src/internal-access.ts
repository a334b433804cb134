import { LedgerlineError } from '@ledgerline/errors';
import { SecurityReason } from '@ledgerline/security';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';

/**
 * The check the services make on an internal API (a cursor's state, the
 * collector), made here before the console calls one for a browser. With
 * mutual TLS the console's channel presents a service certificate, and a
 * service certificate alone passes an internal API's check whatever token it
 * forwards; so the console applies the rule a caller without a certificate
 * meets: with token authentication, a super-user's token; without it, no
 * internal API at all while mutual TLS guards them (a browser has no service
 * certificate). Without either, the services check nothing and neither does this.
 */
export async function checkInternalAccess(context: ConsoleContext, caller: Caller, method: string): Promise<void> {
  if (context.tokenVerifier === undefined) {
    if (!context.presentsServiceCertificate) return;
    throw new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.SERVICE_NOT_ALLOWED,
      `${method} is an internal API guarded by mutual TLS: the console does not call it for a browser; turn token authentication on and sign in with a super-user's token`,
      { details: { method } },
    );
  }
  if (caller.token === undefined) {
    throw new LedgerlineError(
      'UNAUTHENTICATED',
      SecurityReason.TOKEN_MISSING,
      'this cluster requires a bearer token: send Authorization: Bearer <token> (the console asks for one)',
    );
  }
  const role = await context.tokenVerifier.verify(caller.token);
  if (!context.superUserRoles.includes(role)) {
    throw new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.SERVICE_NOT_ALLOWED,
      `${method} is an internal API: role ${role} is not a super-user`,
      { details: { method, role } },
    );
  }
}
