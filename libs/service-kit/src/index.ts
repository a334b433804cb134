export { loadConfig, settingSource } from './config.js';
export type { LoadConfigOptions, SettingSource } from './config.js';
export { settingsHelp } from './settings-help.js';
export { serviceConfigSchema, LOG_FORMATS, LOG_LEVELS } from './service-config.js';
export type { ServiceConfig } from './service-config.js';
export { createLogger, resolveLogFormat } from './logger.js';
export type { Logger, LoggerOptions, LogFormat, LogLevel } from './logger.js';
export { serve } from './serve.js';
export type { ServeOptions, RunningService, ShutdownReport, Closer } from './serve.js';
export { grpcService, startGrpcServer } from './grpc-server.js';
export type {
  GrpcServiceRegistration,
  StartGrpcServerOptions,
  RunningGrpcServer,
  ShutdownOutcome,
} from './grpc-server.js';
export { serviceSecurity, serviceChannel, serviceTokenVerifier } from './service-security.js';
export type { ServiceSecurity, ServiceChannel } from './service-security.js';
export { createMetrics, startMetricsServer } from './metrics.js';
export type { ServiceMetrics, MetricsOptions, MetricsServerOptions, RunningMetricsServer } from './metrics.js';

// For other packages: the reflection builder, for servers assembled by hand.
export { createReflection, HEALTH_SERVICE_NAME } from './reflection.js';
