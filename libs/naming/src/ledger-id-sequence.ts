/**
 * The metadata-store sequence ledger ids come from. Every service that hands
 * out ledger ids from the same store (the metadata service's AllocateLedgerId
 * and a managed ledger allocating straight from a store) must use this one
 * name: two names would be two sequences, and ledger ids would collide.
 */
export const LEDGER_ID_SEQUENCE = 'ledger-id';
