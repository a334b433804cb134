import type { MessageInitShape } from '@bufbuild/protobuf';
import { invalidArgument } from '@ledgerline/errors';
import type { OwnerLoad, OwnerLoadSchema } from '@ledgerline/proto';
import { z } from 'zod';
import { MetadataServiceReason } from './errors.js';

/**
 * An owner's load as the owner record stores it (KeepAliveOwner carries it;
 * ListOwners answers it): rates and the CPU share over `intervalMs`.
 */
export const OwnerLoadRecordSchema = z.object({
  topicsOwned: z.number(),
  messagesInPerSecond: z.number(),
  bytesInPerSecond: z.number(),
  messagesOutPerSecond: z.number(),
  bytesOutPerSecond: z.number(),
  consumers: z.number(),
  pendingEntries: z.number(),
  cpuShare: z.number(),
  intervalMs: z.number(),
});
export type OwnerLoadRecord = z.infer<typeof OwnerLoadRecordSchema>;

/** A rate no owner reaches (10^15 per second): a figure above it is a broken report, not a load. */
const MAX_LOAD_FIGURE = 1e15;

function figure(value: number | bigint, field: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || number > MAX_LOAD_FIGURE) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_OWNER_LOAD,
      `an owner load's ${field} is a finite number from 0 to ${MAX_LOAD_FIGURE}, got ${String(value)}`,
      { field },
    );
  }
  return number;
}

/** The load a keep-alive carries, checked: every figure finite and not negative. */
export function loadRecord(load: OwnerLoad): OwnerLoadRecord {
  return {
    topicsOwned: figure(load.topicsOwned, 'topics_owned'),
    messagesInPerSecond: figure(load.messagesInPerSecond, 'messages_in_per_second'),
    bytesInPerSecond: figure(load.bytesInPerSecond, 'bytes_in_per_second'),
    messagesOutPerSecond: figure(load.messagesOutPerSecond, 'messages_out_per_second'),
    bytesOutPerSecond: figure(load.bytesOutPerSecond, 'bytes_out_per_second'),
    consumers: figure(load.consumers, 'consumers'),
    pendingEntries: figure(load.pendingEntries, 'pending_entries'),
    cpuShare: figure(load.cpuShare, 'cpu_share'),
    intervalMs: figure(load.intervalMs, 'interval_ms'),
  };
}

export function loadMessage(load: OwnerLoadRecord): MessageInitShape<typeof OwnerLoadSchema> {
  return {
    ...load,
    pendingEntries: BigInt(Math.round(load.pendingEntries)),
    intervalMs: BigInt(Math.round(load.intervalMs)),
  };
}
