import type { MessageInitShape } from '@bufbuild/protobuf';
import { invalidArgument } from '@ledgerline/errors';
import { javaStringHashCode, TopicName } from '@ledgerline/naming';
import type { ProduceMessageRequest, ProduceMessageResponseSchema } from '@ledgerline/proto';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import { MAX_PRODUCE_PAYLOAD_BYTES } from './limits.js';

/**
 * The partition a message goes to: by its key as the SDK's key-hash router
 * picks (Java's String.hashCode, so a Pulsar client agrees), or, without a
 * key, any partition.
 */
function partitionFor(key: string | undefined, partitions: number): number {
  if (key !== undefined) return (javaStringHashCode(key) & 0x7fffffff) % partitions;
  return Math.floor(Math.random() * partitions);
}

/** Publishes one message as a producer without a name does (no deduplication); needs the produce permission. */
export async function produceMessage(
  context: ConsoleContext,
  caller: Caller,
  request: ProduceMessageRequest,
): Promise<MessageInitShape<typeof ProduceMessageResponseSchema>> {
  if (request.payload.length > MAX_PRODUCE_PAYLOAD_BYTES) {
    throw invalidArgument(
      ConsoleReason.CONSOLE_LIMIT_EXCEEDED,
      `a payload is at most ${MAX_PRODUCE_PAYLOAD_BYTES} bytes, got ${request.payload.length}`,
      { field: 'payload', max: String(MAX_PRODUCE_PAYLOAD_BYTES) },
    );
  }
  const parsed = TopicName.parse(request.topic);
  let topic = parsed.toString();
  if (!parsed.isPartitioned) {
    const info = await context.backends.admin.getTopic({ topic }, caller.callOptions());
    const partitions = info.topic?.partitions ?? 0;
    if (partitions > 0) topic = parsed.partition(partitionFor(request.key, partitions)).toString();
  }
  const answer = await context.backends.atOwner(topic, caller, (owner) =>
    owner.topics.publishOne(
      {
        message: {
          topic,
          payload: request.payload,
          ...(request.key === undefined ? {} : { key: request.key }),
          properties: request.properties,
          eventTimeMs: request.eventTimeMs,
        },
      },
      caller.callOptions(),
    ),
  );
  const receipt = answer.receipt!;
  return {
    topic,
    offset: receipt.firstOffset,
    ...(receipt.position === undefined ? {} : { position: receipt.position }),
    publishTimeMs: receipt.publishTimeMs,
  };
}
