import type { TokenVerifier } from '@ledgerline/security';
import type { ConsoleBackends } from './backends.js';

/** What every handler of ConsoleService reads: the services' clients and how the deployment checks callers. */
export interface ConsoleContext {
  readonly backends: ConsoleBackends;
  /** Set when the services check tokens: the console verifies them only to tell a browser who it is. */
  readonly tokenVerifier: TokenVerifier | undefined;
  readonly superUserRoles: readonly string[];
  /** "standalone" or "cluster". */
  readonly mode: string;
  readonly version: string;
  /** The console's channels present a service certificate (mutual TLS): see internal-access.ts. */
  readonly presentsServiceCertificate: boolean;
  /** Deadline of each call to a service, in ms. */
  readonly callDeadlineMs: number;
}
