import type { MessageInitShape } from '@bufbuild/protobuf';
import { TopicName } from '@ledgerline/naming';
import type { BrowseTopicsRequest, BrowseTopicsResponseSchema } from '@ledgerline/proto';
import { boundedCount } from './bounded-input.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { DEFAULT_TOPIC_PAGE, MAX_TOPIC_PAGE } from './limits.js';

/**
 * A page of a namespace's topics, searched by prefix: the metadata service's
 * bucketed listing starts every bucket at the prefix, so a page costs the
 * same at a million topics as at ten. Its page token is passed through.
 */
export async function browseTopics(
  context: ConsoleContext,
  caller: Caller,
  request: BrowseTopicsRequest,
): Promise<MessageInitShape<typeof BrowseTopicsResponseSchema>> {
  const pageSize = boundedCount(request.pageSize, DEFAULT_TOPIC_PAGE, MAX_TOPIC_PAGE, 'page_size');
  const { admin } = context.backends;
  const options = caller.callOptions();
  const [page, count, namespace] = await Promise.all([
    admin.listTopics(
      { namespace: request.namespace, pageToken: request.pageToken, pageSize, prefix: request.prefix },
      options,
    ),
    admin.countTopics({ namespace: request.namespace }, options),
    admin.getNamespace({ namespace: request.namespace }, options),
  ]);
  return {
    topics: page.topics.map((name) => ({ name, localName: TopicName.parse(name).localName, partitions: 0 })),
    nextPageToken: page.nextPageToken,
    namespaceTopicCount: count.count,
    numberOfTopicBuckets: namespace.namespace?.policies?.numberOfTopicBuckets ?? 1,
  };
}
