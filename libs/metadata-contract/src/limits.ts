/**
 * Topics one ConfirmLeases call may name: an owner holding more splits its
 * check into calls of this many (about 100 KB of names at most), so no call
 * holds the metadata service's reads for long.
 */
export const MAX_LEASES_PER_CONFIRM = 1_000;
