import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LOG_FORMATS, LOG_LEVELS } from './service-config.js';

export type { Logger } from 'pino';
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  /** Defaults to info. */
  level?: LogLevel;
  /** Defaults to auto: pretty when stdout is a terminal, JSON otherwise. */
  format?: LogFormat;
  /**
   * Whether the lines go to a terminal: by default process.stdout.isTTY when
   * they go to stdout, and false for a destination handed in. Tests say it
   * rather than need a terminal.
   */
  stdoutIsTty?: boolean;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

/**
 * The format a logger writes. A person watching `npm start` in a terminal
 * reads lines, not JSON objects; anything reading the output back (a file, a
 * pipe into jq, a pod's log collector) gets one JSON object per line, which
 * is why only a terminal turns pretty printing on by itself.
 */
export function resolveLogFormat(format: LogFormat, stdoutIsTty: boolean): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return stdoutIsTty ? 'pretty' : 'json';
}

/**
 * A pino logger tagged with the service name, writing one JSON object per
 * line, or lines for people (pino-pretty) where resolveLogFormat says so. Both
 * write synchronously on the main thread (no transport worker), so nothing
 * logged just before exit is lost.
 */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const settings = { name, level: options.level ?? 'info', base: { service: name, pid: process.pid } };
  const stdoutIsTty = options.stdoutIsTty ?? (options.destination === undefined && process.stdout.isTTY === true);
  const destination =
    resolveLogFormat(options.format ?? 'auto', stdoutIsTty) === 'pretty'
      ? prettyDestination(options.destination)
      : options.destination;
  return destination === undefined ? pino(settings) : pino(settings, destination);
}

/**
 * pino-pretty's formatter behind a synchronous write, rather than its stream
 * (a transform pipeline that can still hold lines when the process exits).
 */
function prettyDestination(destination: DestinationStream | undefined): DestinationStream {
  const prettify = prettyFactory({
    translateTime: 'SYS:HH:MM:ss.l',
    // The name in each line says which service; pid and hostname are the same on every line of a process.
    ignore: 'pid,hostname,service',
    // Colours follow the terminal (NO_COLOR, FORCE_COLOR) on stdout; a stream handed in gets plain text.
    ...(destination === undefined ? {} : { colorize: false }),
  });
  const out = destination ?? pino.destination({ dest: 1, sync: true });
  return { write: (line: string) => out.write(prettify(line)) };
}
