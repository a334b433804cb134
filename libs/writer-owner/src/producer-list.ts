import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ListProducersRequest, ListProducersResponseSchema } from '@ledgerline/proto';
import type { Deduplication } from './deduplication.js';
import type { OwnedTopic } from './owned-topic.js';

/**
 * Producers one ListProducers answer lists at most (the most recently active
 * of those asked for): a topic's deduplication may know up to
 * maxDedupProducersPerTopic of them, and an answer stays a few tens of KiB.
 */
export const MAX_LISTED_PRODUCERS = 1_000;

/** ListProducers of one topic's deduplication: its producers with a stored entry, within the bound. */
export function listProducers(
  dedup: Deduplication,
  request: ListProducersRequest,
): MessageInitShape<typeof ListProducersResponseSchema> {
  const bound =
    request.maxProducers === 0 ? MAX_LISTED_PRODUCERS : Math.min(request.maxProducers, MAX_LISTED_PRODUCERS);
  const matching = [...dedup.storedMarks()].filter((mark) => mark.name.startsWith(request.namePrefix));
  // Least recently active first: the bound keeps the tail, the producers heard from last.
  const kept = matching.slice(Math.max(0, matching.length - bound));
  return {
    producers: kept.map((mark) => ({
      name: mark.name,
      lastSequenceId: mark.highest,
      lastPublishTimeMs: BigInt(mark.receipt?.publishTimeMs ?? 0),
    })),
    omitted: matching.length - kept.length,
  };
}

/** ListProducers on a writer owner. */
export async function topicProducers(
  owner: { topic(name: string): Promise<OwnedTopic> },
  request: ListProducersRequest,
): Promise<MessageInitShape<typeof ListProducersResponseSchema>> {
  const topic = await owner.topic(request.topic);
  return listProducers(topic.dedup, request);
}
