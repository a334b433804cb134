import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { TopicName } from '@ledgerline/naming';
import type { BrowseTopicsRequest, BrowseTopicsResponseSchema, TopicRowSchema } from '@ledgerline/proto';
import pMap from 'p-map';
import { boundedCount } from './bounded-input.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { DEFAULT_TOPIC_PAGE, FAN_OUT_CONCURRENCY, MAX_LISTING_CALLS_PER_PAGE, MAX_TOPIC_PAGE } from './limits.js';

type TopicRow = MessageInitShape<typeof TopicRowSchema>;

/** What one listed name becomes: a row, a partitioned topic's row (its count still to read), or nothing. */
type Folded =
  { kind: 'row'; row: TopicRow } | { kind: 'partitioned'; topic: TopicName; listed: string } | { kind: 'folded' };

/**
 * Where a listed name goes. The listing holds a partitioned topic's
 * partitions (`x-partition-N`), never the topic itself; partition 0 sorts
 * first of them, so the topic's one row stands where partition 0 is listed and
 * its other partitions are left out, whichever page they fall on. When the
 * prefix reaches past the topic's own name it may leave partition 0 out: then
 * each partition it matches is a row of its own, marked with its topic.
 */
function foldName(name: string, prefix: string): Folded {
  const parsed = TopicName.parse(name);
  const row: TopicRow = { name, localName: parsed.localName, partitions: 0 };
  if (!parsed.isPartitioned) return { kind: 'row', row };
  const topic = TopicName.parse(parsed.partitionedTopicName);
  if (!topic.localName.startsWith(prefix)) {
    return { kind: 'row', row: { ...row, partitionedTopic: topic.toString() } };
  }
  return parsed.partitionIndex === 0 ? { kind: 'partitioned', topic, listed: name } : { kind: 'folded' };
}

/**
 * The partition count of each partitioned topic a page shows: one GetTopic per
 * such row, never one per listed name. A partition whose topic is gone or not
 * partitioned (a deletion under way) is shown as the listing named it.
 */
async function partitionedRows(
  context: ConsoleContext,
  caller: Caller,
  found: readonly Extract<Folded, { kind: 'partitioned' }>[],
): Promise<TopicRow[]> {
  return pMap(
    found,
    async ({ topic, listed }) => {
      const partitions = await context.backends.admin.getTopic({ topic: topic.toString() }, caller.callOptions()).then(
        (answer) => answer.topic?.partitions ?? 0,
        (thrown: unknown) => {
          if (LedgerlineError.from(thrown).code === 'NOT_FOUND') return 0;
          throw thrown;
        },
      );
      if (partitions === 0) return { name: listed, localName: TopicName.parse(listed).localName, partitions: 0 };
      return { name: topic.toString(), localName: topic.localName, partitions };
    },
    { concurrency: FAN_OUT_CONCURRENCY },
  );
}

/** The rows of one listed page, in the listing's order, and how many names were folded into a topic's row. */
async function rowsOf(
  context: ConsoleContext,
  caller: Caller,
  names: readonly string[],
  prefix: string,
): Promise<{ rows: TopicRow[]; folded: number }> {
  const folds = names.map((name) => foldName(name, prefix));
  const partitioned = folds.filter((fold) => fold.kind === 'partitioned');
  const counted = await partitionedRows(context, caller, partitioned);
  const rows: TopicRow[] = [];
  let next = 0;
  for (const fold of folds) {
    if (fold.kind === 'row') rows.push(fold.row);
    else if (fold.kind === 'partitioned') rows.push(counted[next++]!);
  }
  return { rows, folded: folds.length - rows.length };
}

/**
 * A page of a namespace's topics, searched by prefix: the metadata service's
 * bucketed listing starts every bucket at the prefix, so a page costs the
 * same at a million topics as at ten. Its page token is passed through.
 *
 * A partitioned topic is one row (see foldName), with its partition count
 * from one GetTopic. When partitions folded away leave a page short, the
 * listing is asked again from where it stopped for the rows still missing,
 * at most MAX_LISTING_CALLS_PER_PAGE times: a topic with thousands of
 * partitions then costs a few short pages, not a page of reads per partition.
 * A namespace without partitioned topics costs one listing call a page, as
 * before.
 */
export async function browseTopics(
  context: ConsoleContext,
  caller: Caller,
  request: BrowseTopicsRequest,
): Promise<MessageInitShape<typeof BrowseTopicsResponseSchema>> {
  const pageSize = boundedCount(request.pageSize, DEFAULT_TOPIC_PAGE, MAX_TOPIC_PAGE, 'page_size');
  const { admin } = context.backends;
  const options = caller.callOptions();
  const namespaceFacts = Promise.all([
    admin.countTopics({ namespace: request.namespace }, options),
    admin.getNamespace({ namespace: request.namespace }, options),
  ]);
  // Read with the listing, so a refusal of either is not left unhandled while the listing fails first.
  namespaceFacts.catch(() => undefined);
  const rows: TopicRow[] = [];
  let pageToken = request.pageToken;
  for (let calls = 1; ; calls++) {
    const page = await admin.listTopics(
      { namespace: request.namespace, pageToken, pageSize: pageSize - rows.length, prefix: request.prefix },
      options,
    );
    const listed = await rowsOf(context, caller, page.topics, request.prefix);
    rows.push(...listed.rows);
    pageToken = page.nextPageToken;
    if (pageToken === '' || rows.length >= pageSize || listed.folded === 0 || calls >= MAX_LISTING_CALLS_PER_PAGE) {
      break;
    }
  }
  const [count, namespace] = await namespaceFacts;
  return {
    topics: rows,
    nextPageToken: pageToken,
    namespaceTopicCount: count.count,
    numberOfTopicBuckets: namespace.namespace?.policies?.numberOfTopicBuckets ?? 1,
  };
}
