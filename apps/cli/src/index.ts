export { buildProgram, runCli } from './program.js';
export { startStandalone } from './standalone.js';
export { standaloneServerConfigSchema } from './standalone.js';
export type { RunningStandalone, StandaloneServerConfig } from './standalone.js';
export { processIo } from './cli-io.js';
export type { CliIo, Progress } from './cli-io.js';

// For other packages and tests: the pieces the commands are built from.
export { connectAdmin, normaliseUrl, DEFAULT_URL, CALL_DEADLINE_MS } from './admin-connection.js';
export type { AdminConnection } from './admin-connection.js';
export { reportError, usageError, CliExit, EXIT_CODES, EXIT_STATUS_HELP } from './cli-errors.js';
export { createInBatches, generatedNames, namesFromFile } from './commands/topic-bulk.js';
export type { BulkCreateOptions, BulkCreateSummary } from './commands/topic-bulk.js';
