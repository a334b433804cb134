import { encodeMetadataChange, metadataChangedSubject, type Bus } from '@ledgerline/bus';
import type { MetadataChange } from './store.js';

/**
 * Publishes MetadataChange notifications after writes. A notification is a
 * hint, so a bus failure never fails the write that caused it; it is counted.
 */
export class ChangePublisher {
  private failures = 0;

  constructor(private readonly bus: Bus | undefined) {}

  get failedPublishes(): number {
    return this.failures;
  }

  async publish(change: MetadataChange): Promise<void> {
    if (this.bus === undefined) return;
    try {
      await this.bus.publish(metadataChangedSubject(change.path), encodeMetadataChange(change));
    } catch {
      this.failures++;
    }
  }

  async publishAll(changes: readonly MetadataChange[]): Promise<void> {
    for (const change of changes) await this.publish(change);
  }
}
