import { LEDGER_ID_SEQUENCE } from '@ledgerline/naming';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { NodeManagedLedgerMetadata } from './node-managed-ledger-metadata.js';

/**
 * ManagedLedgerMetadata over a MetadataStore: used in-process by the metadata
 * service, in standalone mode and in tests. Ledger ids come from the store's
 * LEDGER_ID_SEQUENCE, the same sequence AllocateLedgerId serves.
 */
export class MetadataStoreManagedLedgerMetadata extends NodeManagedLedgerMetadata {
  constructor(store: MetadataStore) {
    super(store, () => store.nextId(LEDGER_ID_SEQUENCE));
  }
}
