import { createClient, type LedgerlineClient } from '@ledgerline/client';
import type { Command } from 'commander';
import { CliExit, reportError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { urlOf } from './admin-command.js';
import { normaliseUrl } from './admin-connection.js';
import { connectionSecurityOf } from './connection-security.js';

/**
 * Runs one action with an SDK client: creates it for --url, prints any
 * failure on one line with its code and reason, ends the command with its
 * exit status, and always closes the client. Ctrl-C (SIGINT) aborts `signal`
 * so long commands stop cleanly and still print their summary.
 */
export async function withClient(
  io: CliIo,
  command: Command,
  action: (client: LedgerlineClient, signal: AbortSignal) => Promise<void>,
  options: { group?: string } = {},
): Promise<void> {
  const url = normaliseUrl(urlOf(command));
  const interrupted = new AbortController();
  const onSignal = (): void => interrupted.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let client: LedgerlineClient | undefined;
  try {
    const group = options.group ?? '';
    const { tls, token } = connectionSecurityOf(command);
    client = createClient({
      serviceUrl: url,
      tls,
      ...(token === undefined ? {} : { token }),
      ...(group === '' ? {} : { lookupGroup: group }),
    });
    await action(client, interrupted.signal);
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(reportError(io, error, url));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await client?.close();
  }
}
