import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError, invalidArgument } from '@ledgerline/errors';
import type {
  BrowsedMessageSchema,
  BrowseMessagesRequest,
  BrowseMessagesResponseSchema,
  Entry,
} from '@ledgerline/proto';
import type { OwnerClients } from './backends.js';
import { boundedCount } from './bounded-input.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import {
  BROWSE_FETCH_BYTES,
  DEFAULT_BROWSE_MESSAGES,
  DEFAULT_BROWSE_PAYLOAD_BYTES,
  MAX_BROWSE_FETCHES,
  MAX_BROWSE_MESSAGES,
  MAX_BROWSE_PAYLOAD_BYTES,
} from './limits.js';
import { singleLogTopic } from './single-topic.js';

type BrowsedMessage = MessageInitShape<typeof BrowsedMessageSchema>;

interface Window {
  earliest: bigint;
  latest: bigint;
}

/** Where a browse starts, as an offset: the one asked for, or the first message at or after the time. */
async function startOffset(
  owner: OwnerClients,
  caller: Caller,
  topic: string,
  request: BrowseMessagesRequest,
): Promise<bigint> {
  const start = request.start;
  if (start.case === undefined) {
    throw invalidArgument(ConsoleReason.CONSOLE_BAD_START, 'a browse starts at an offset or at a time: set one');
  }
  if (start.value < 0n) {
    throw invalidArgument(ConsoleReason.CONSOLE_BAD_START, `${start.case} must be 0 or more, got ${start.value}`, {
      [start.case]: String(start.value),
    });
  }
  if (start.case === 'offset') return start.value;
  const found = await owner.topics.findPosition(
    { topic, target: { case: 'timestampMs', value: start.value } },
    caller.callOptions(),
  );
  return found.offset;
}

function browsed(entry: Entry, from: bigint, maxPayloadBytes: number): BrowsedMessage[] {
  return entry.messages
    .filter((message) => message.offset >= from)
    .map((message) => ({
      offset: message.offset,
      ...(entry.position === undefined ? {} : { position: entry.position }),
      batchIndex: message.batchIndex,
      ...(message.key === undefined ? {} : { key: message.key }),
      properties: message.properties,
      payload: message.payload.subarray(0, maxPayloadBytes),
      payloadSizeBytes: BigInt(message.payload.length),
      payloadTruncated: message.payload.length > maxPayloadBytes,
      publishTimeMs: message.publishTimeMs,
      eventTimeMs: message.eventTimeMs,
      brokerTimestampMs: entry.brokerTimestampMs,
      producerName: message.producerName,
      sequenceId: message.sequenceId,
    }));
}

/** Reads from `from` with FetchByOffset, which needs the consume permission: a role without it gets no payload. */
async function readFrom(
  owner: OwnerClients,
  caller: Caller,
  topic: string,
  from: bigint,
  window: Window,
  limits: { messages: number; payloadBytes: number },
) {
  const messages: BrowsedMessage[] = [];
  let next = from;
  for (
    let fetches = 0;
    fetches < MAX_BROWSE_FETCHES && messages.length < limits.messages && next < window.latest;
    fetches++
  ) {
    const answer = await owner.topics.fetchByOffset(
      {
        topic,
        offset: next,
        maxEntries: limits.messages - messages.length,
        maxBytes: BigInt(BROWSE_FETCH_BYTES),
        maxWaitMs: 0n,
      },
      caller.callOptions(),
    );
    window.latest = answer.nextOffset > window.latest ? answer.nextOffset : window.latest;
    if (answer.entries.length === 0) break;
    for (const entry of answer.entries) messages.push(...browsed(entry, next, limits.payloadBytes));
    next = answer.entries.at(-1)!.lastOffset + 1n;
  }
  const kept = messages.slice(0, limits.messages);
  return { messages: kept, next: kept.length === messages.length ? next : (kept.at(-1)!.offset! as bigint) + 1n };
}

/**
 * The message browser: up to max_messages messages from an offset or a time,
 * each with its key, properties, payload (cut at max_payload_bytes) and where
 * it is stored. An offset below the earliest retained one starts at the
 * earliest (before_earliest says so); one past the end is OUT_OF_RANGE naming
 * the next offset.
 */
export async function browseMessages(
  context: ConsoleContext,
  caller: Caller,
  request: BrowseMessagesRequest,
): Promise<MessageInitShape<typeof BrowseMessagesResponseSchema>> {
  const limits = {
    messages: boundedCount(request.maxMessages, DEFAULT_BROWSE_MESSAGES, MAX_BROWSE_MESSAGES, 'max_messages'),
    payloadBytes: boundedCount(
      request.maxPayloadBytes,
      DEFAULT_BROWSE_PAYLOAD_BYTES,
      MAX_BROWSE_PAYLOAD_BYTES,
      'max_payload_bytes',
    ),
  };
  const topic = await singleLogTopic(context, caller, request.topic);
  return context.backends.atOwner(topic, caller, async (owner) => {
    const stats = await owner.topics.getTopicStats({ topic }, caller.callOptions());
    const window: Window = { earliest: stats.earliestOffset, latest: stats.nextOffset };
    const asked = await startOffset(owner, caller, topic, request);
    if (asked > window.latest) {
      throw new LedgerlineError(
        'OUT_OF_RANGE',
        ConsoleReason.CONSOLE_OFFSET_PAST_END,
        `offset ${asked} is past the end of ${topic}: the next message will get offset ${window.latest}`,
        { details: { topic, offset: String(asked), next_offset: String(window.latest) } },
      );
    }
    const beforeEarliest = asked < window.earliest;
    const from = beforeEarliest ? window.earliest : asked;
    const read = await readFrom(owner, caller, topic, from, window, limits);
    return {
      messages: read.messages,
      startOffset: from,
      nextOffset: read.next,
      earliestOffset: window.earliest,
      latestOffset: window.latest,
      beforeEarliest,
    };
  });
}
