import { InvalidArgumentError, type Command } from 'commander';
import { connectAdmin, type AdminConnection } from './admin-connection.js';
import { DEFAULT_URL } from './global-options.js';
import { CliExit, reportError } from './cli-errors.js';
import { connectionSecurityOf } from './connection-security.js';
import type { CliIo } from './cli-io.js';

/** Parses an integer option within bounds; anything else is a command-line mistake (exit status 2). */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    }
    return number;
  };
}

/** Parses a `true` or `false` option; anything else is a command-line mistake (exit status 2). */
export function booleanValue(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('expected true or false.');
}

/** The --url of the command line (a global option), or the default. */
export function urlOf(command: Command): string {
  return (command.optsWithGlobals() as { url?: string }).url ?? DEFAULT_URL;
}

/**
 * Runs one admin action against the service: connects, runs, prints any
 * failure with its status code and reason on one line, and ends the command
 * with its exit status (a CliExit; see EXIT_CODES).
 */
export async function withAdmin(
  io: CliIo,
  command: Command,
  action: (connection: AdminConnection) => Promise<void>,
): Promise<void> {
  const url = urlOf(command);
  let connection: AdminConnection | undefined;
  try {
    connection = connectAdmin(url, connectionSecurityOf(command));
    await action(connection);
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(reportError(io, error, connection?.url ?? url));
  } finally {
    connection?.close();
  }
}

/** JSON with bigints as numbers when they fit (for `get` commands). */
export function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (key, item: unknown) => {
      if (key === '$typeName') return undefined;
      if (typeof item === 'bigint') return Number.isSafeInteger(Number(item)) ? Number(item) : item.toString();
      return item;
    },
    2,
  );
}
