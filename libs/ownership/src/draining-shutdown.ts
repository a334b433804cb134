import type { RunningService } from '@ledgerline/service-kit';
import type { Logger } from 'pino';

export interface DrainingShutdownOptions {
  owner: { drain(): Promise<void>; readonly logger: Logger };
  service: RunningService;
  /** Signals that drain and stop the service (default SIGTERM and SIGINT; [] for none, as in tests). */
  signals?: readonly NodeJS.Signals[];
  /** Called once a signal-started shutdown is done; defaults to exiting (0 when clean). */
  onSignalShutdown?: (clean: boolean) => void;
}

/**
 * An owner's shutdown: drain first (its topics unloaded, leases released),
 * then stop the server and run the closers; true when all of it was clean.
 * A second signal while stopping exits at once. Calling it again returns the
 * same promise.
 */
export function drainingShutdown(options: DrainingShutdownOptions): (reason?: string) => Promise<boolean> {
  const { owner, service } = options;
  let stopping: Promise<boolean> | undefined;
  const shutdown = (reason = 'requested'): Promise<boolean> =>
    (stopping ??= (async () => {
      await owner.drain().catch((error: unknown) => owner.logger.error({ err: error }, 'drain failed'));
      const report = await service.shutdown(reason);
      for (const signal of signals) process.off(signal, onSignal);
      return !report.forced && report.failedClosers.length === 0;
    })());
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping !== undefined) process.exit(1);
    shutdown(signal).then(options.onSignalShutdown ?? ((clean) => process.exit(clean ? 0 : 1)), (error: unknown) => {
      owner.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  for (const signal of signals) process.on(signal, onSignal);
  return shutdown;
}
