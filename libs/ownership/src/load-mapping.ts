import type { MessageInitShape } from '@bufbuild/protobuf';
import type { OwnerLoadSchema } from '@ledgerline/proto';
import type { OwnerLoad } from './owner-load.js';

/** An owner's load as KeepAliveOwner carries it. */
export function loadMessage(load: OwnerLoad): MessageInitShape<typeof OwnerLoadSchema> {
  return {
    topicsOwned: load.topicsOwned,
    messagesInPerSecond: load.messagesInPerSecond,
    bytesInPerSecond: load.bytesInPerSecond,
    messagesOutPerSecond: load.messagesOutPerSecond,
    bytesOutPerSecond: load.bytesOutPerSecond,
    consumers: load.consumers,
    pendingEntries: BigInt(load.pendingEntries),
    storageBytes: BigInt(Math.round(load.storageBytes)),
    cpuShare: load.cpuShare,
    intervalMs: BigInt(Math.round(load.intervalMs)),
    busiestTopics: load.busiestTopics.map((each) => ({ topic: each.topic, messagesPerSecond: each.messagesPerSecond })),
  };
}
