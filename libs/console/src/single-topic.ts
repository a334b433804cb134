import { invalidArgument } from '@ledgerline/errors';
import { TopicName } from '@ledgerline/naming';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';

/**
 * The full name of a topic a call reads one log of: a non-partitioned topic
 * or one partition. A partitioned topic as a whole is refused, naming how to
 * pick a partition; a topic that does not exist is the metadata service's
 * NOT_FOUND.
 */
export async function singleLogTopic(context: ConsoleContext, caller: Caller, name: string): Promise<string> {
  const parsed = TopicName.parse(name);
  if (parsed.isPartitioned) return parsed.toString();
  const info = await context.backends.admin.getTopic({ topic: parsed.toString() }, caller.callOptions());
  const partitions = info.topic?.partitions ?? 0;
  if (partitions > 0) {
    throw invalidArgument(
      ConsoleReason.CONSOLE_PARTITION_REQUIRED,
      `${parsed.toString()} has ${partitions} partitions: name one, e.g. ${parsed.partition(0).toString()}`,
      { topic: parsed.toString(), partitions: String(partitions) },
    );
  }
  return parsed.toString();
}
