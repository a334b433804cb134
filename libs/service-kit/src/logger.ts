import { pino, type DestinationStream, type Logger } from 'pino';
import type { LOG_LEVELS } from './service-config.js';

export type { Logger } from 'pino';
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Defaults to info. */
  level?: LogLevel;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

/**
 * A pino logger writing one JSON object per line, tagged with the service
 * name. It writes synchronously on the main thread (no transport worker), so
 * nothing logged just before exit is lost.
 */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const settings = { name, level: options.level ?? 'info', base: { service: name, pid: process.pid } };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
