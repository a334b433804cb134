import type { Bus } from '@ledgerline/bus';
import type { MetadataStore } from '@ledgerline/metadata-store';

/** What every admin module works over: the store, a clock (tests move the clock, not the wall), the bus. */
export interface AdminContext {
  store: MetadataStore;
  now(): number;
  /** Where announcements beyond the store's own change notifications go; optional in tests. */
  bus?: Bus;
}
