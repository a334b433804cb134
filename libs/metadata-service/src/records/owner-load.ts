import type { MessageInitShape } from '@bufbuild/protobuf';
import { invalidArgument } from '@ledgerline/errors';
import type { OwnerLoad, OwnerLoadSchema } from '@ledgerline/proto';
import { z } from 'zod';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

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
  /** Absent in records written before owners reported it. */
  storageBytes: z.number().optional(),
  cpuShare: z.number(),
  intervalMs: z.number(),
  /** Absent in records written before owners reported it. */
  busiestTopics: z.array(z.object({ topic: z.string(), messagesPerSecond: z.number() })).optional(),
});
export type OwnerLoadRecord = z.infer<typeof OwnerLoadRecordSchema>;

/** A rate no owner reaches (10^15 per second): a figure above it is a broken report, not a load. */
const MAX_LOAD_FIGURE = 1e15;
/** Busiest topics a report may name: owners send 16; the bound keeps an owner record small. */
export const MAX_BUSIEST_TOPICS = 64;
/** Longer than any topic name the naming rules allow. */
const MAX_TOPIC_NAME_CHARS = 1_024;

/**
 * Bytes an owner's topics may hold: as many as a number counts exactly. A
 * refused load fails the keep-alive, so a real figure must never reach it.
 */
const MAX_STORAGE_BYTES = Number.MAX_SAFE_INTEGER;

function figure(value: number | bigint, field: string, max = MAX_LOAD_FIGURE): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || number > max) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_OWNER_LOAD,
      `an owner load's ${field} is a finite number from 0 to ${max}, got ${String(value)}`,
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
    storageBytes: figure(load.storageBytes, 'storage_bytes', MAX_STORAGE_BYTES),
    cpuShare: figure(load.cpuShare, 'cpu_share'),
    intervalMs: figure(load.intervalMs, 'interval_ms'),
    busiestTopics: busiestTopics(load),
  };
}

function busiestTopics(load: OwnerLoad): { topic: string; messagesPerSecond: number }[] {
  if (load.busiestTopics.length > MAX_BUSIEST_TOPICS) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_OWNER_LOAD,
      `an owner load names at most ${MAX_BUSIEST_TOPICS} busiest topics, got ${load.busiestTopics.length}`,
      { field: 'busiest_topics' },
    );
  }
  return load.busiestTopics.map((each) => {
    if (each.topic === '' || each.topic.length > MAX_TOPIC_NAME_CHARS) {
      throw invalidArgument(
        MetadataServiceReason.INVALID_OWNER_LOAD,
        `a busiest topic of an owner load names a topic of 1 to ${MAX_TOPIC_NAME_CHARS} characters`,
        { field: 'busiest_topics.topic' },
      );
    }
    return {
      topic: each.topic,
      messagesPerSecond: figure(each.messagesPerSecond, 'busiest_topics.messages_per_second'),
    };
  });
}

export function loadMessage(load: OwnerLoadRecord): MessageInitShape<typeof OwnerLoadSchema> {
  return {
    ...load,
    busiestTopics: load.busiestTopics ?? [],
    pendingEntries: BigInt(Math.round(load.pendingEntries)),
    storageBytes: BigInt(Math.round(load.storageBytes ?? 0)),
    intervalMs: BigInt(Math.round(load.intervalMs)),
  };
}
