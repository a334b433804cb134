import type { LedgerContext } from '../context.js';
import { shouldRollover } from './ledger-rollover.js';
import type { LedgerTrimmer } from './ledger-trimmer.js';
import type { ManagedLedgerLifecycle } from '../managed-ledger-lifecycle.js';

/**
 * The managed ledger's periodic work, every maintenanceIntervalMs while it is
 * open: rollover by age (a ledger that stopped receiving appends still rolls
 * at maxLedgerAgeMs) and trimming.
 */
export class LedgerMaintenance {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: LedgerContext,
    private readonly lifecycle: ManagedLedgerLifecycle,
    private readonly pipeline: { requestRollover(): void },
    private readonly trimmer: LedgerTrimmer,
  ) {}

  /**
   * Starts rollover by age and trimming, once every stored cursor is
   * recovered: trimming before then would not see the cursors still being
   * read, and could mark ledgers they have not consumed deletable.
   */
  start(): void {
    this.trimmer.allow();
    if (this.ctx.config.maintenanceIntervalMs > 0 && this.lifecycle.status === 'open') {
      this.timer = setInterval(() => this.run(), this.ctx.config.maintenanceIntervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    const current = this.ctx.current;
    if (this.lifecycle.status !== 'open') return;
    if (current !== undefined && !current.sealed && shouldRollover(current, this.ctx.config, this.ctx.now())) {
      this.pipeline.requestRollover();
    }
    this.trimmer.schedule();
  }
}
