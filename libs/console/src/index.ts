// The web console's server side: what apps/console and standalone host.
export { startConsole, startClusterConsole, CONSOLE_VERSION } from './start-console.js';
export type { ConsoleOptions, RunningConsole, RunningClusterConsole } from './start-console.js';
export { consoleSettings, clusterConsoleConfigSchema } from './settings.js';
export type { ClusterConsoleConfig } from './settings.js';
export { ConsoleReason } from './console-reason.js';

// For other packages and tools: the pieces the server is built from, and the limits.
export { startConsoleServer } from './console-server.js';
export type { ConsoleServerOptions, RunningConsoleServer } from './console-server.js';
export { consoleServiceImpl } from './console-service.js';
export { ConsoleBackends } from './backends.js';
export type { ConsoleBackendsOptions, OwnerClients } from './backends.js';
export type { ConsoleContext } from './console-context.js';
export { toConnectError } from './connect-errors.js';
export * from './limits.js';
