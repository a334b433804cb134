import type { PeerCertificate } from 'node:tls';
import { LedgerlineError } from '@ledgerline/errors';
import { checkInternalCall } from './internal-apis.js';

/** What the guard needs to know about a call (a subset of the RPC layer's CallContext). */
export interface GuardedCall {
  readonly method: string;
  readonly peer: string;
  readonly peerCertificate?: PeerCertificate;
}

export interface CallGuardOptions {
  /**
   * Mutual TLS is on (the server has a CA to verify client certificates):
   * internal APIs then accept only the service identities allowed to call them.
   */
  mutualTls: boolean;
  /** Told of every refused call, for a metric and a log line (never the token). */
  onRefused?: (call: GuardedCall, error: LedgerlineError) => void;
}

export type CallGuard = (call: GuardedCall, request: unknown) => Promise<void> | void;

/**
 * The check every call goes through before its handler, or undefined when
 * there is nothing to check (security off: the default, so standalone and
 * development stay open).
 */
export function createCallGuard(options: CallGuardOptions): CallGuard | undefined {
  if (!options.mutualTls) return undefined;
  return (call) => {
    try {
      checkInternalCall(call.method, call.peerCertificate);
    } catch (error) {
      if (error instanceof LedgerlineError) options.onRefused?.(call, error);
      throw error;
    }
  };
}
