// A service process for the signal test: serves, prints its port, and shuts
// down gracefully on SIGTERM, closing a pretend store on the way out.
import { createLogger, loadConfig, serve, serviceConfigSchema } from '../index.js';
import { waitingService } from './waiting-service.js';

async function main(): Promise<void> {
  const config = loadConfig(serviceConfigSchema);
  const logger = createLogger('signal-test', { level: config.logLevel });
  const service = await serve({
    name: 'signal-test',
    config,
    logger,
    services: [waitingService().registration],
    closers: [{ name: 'pretend store', close: () => logger.info('pretend store closed') }],
  });
  logger.info({ grpcPort: service.grpcPort }, 'ready');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
