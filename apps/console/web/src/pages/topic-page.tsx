import { Link, useParams } from 'react-router';
import type { GetTopicSummaryResponse, PartitionSummary } from '@gen/console_pb';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView, Facts, Table } from '../components/call-view';
import { SUBSCRIPTION_TYPE_NAMES } from '../format/names';
import { formatBytes, formatCount, formatPosition, formatRate, formatTime } from '../format/units';
import { paths } from '../paths';

function Ledgers({ partition }: { partition: PartitionSummary }) {
  return (
    <Table
      testId="ledgers"
      head={['ledger', 'entries', 'size', 'offsets', 'broker time', 'state']}
      rows={partition.ledgers.map((ledger) => [
        String(ledger.ledgerId),
        formatCount(ledger.entries),
        formatBytes(ledger.sizeBytes),
        ledger.firstOffset < 0n ? '—' : `${ledger.firstOffset} … ${ledger.lastOffset}`,
        ledger.minBrokerTimestampMs === 0n
          ? '—'
          : `${formatTime(ledger.minBrokerTimestampMs)} … ${formatTime(ledger.maxBrokerTimestampMs)}`,
        ledger.open ? 'open' : 'closed',
      ])}
      empty="No ledgers."
    />
  );
}

function Subscriptions({ partition }: { partition: PartitionSummary }) {
  return (
    <Table
      testId="subscriptions"
      head={[
        'subscription',
        'type',
        'backlog',
        'mark-delete',
        'acked ranges',
        'unacked',
        'redelivered',
        'consumers',
        'out',
      ]}
      rows={partition.subscriptions.map((subscription) => [
        <Link to={paths.subscription(partition.topic, subscription.name)}>{subscription.name}</Link>,
        SUBSCRIPTION_TYPE_NAMES[subscription.type] ?? '—',
        formatCount(subscription.backlogMessages),
        formatPosition(subscription.markDelete),
        formatCount(subscription.ackedRanges),
        formatCount(subscription.unackedMessages),
        formatCount(subscription.redeliveredMessages),
        subscription.consumers,
        formatRate(subscription.messagesOutPerSecond),
      ])}
      empty="No subscriptions."
    />
  );
}

function Partition({ partition }: { partition: PartitionSummary }) {
  return (
    <div className="card" data-testid="partition">
      <h2>
        {partition.index < 0 ? 'Topic' : `Partition ${partition.index}`}{' '}
        <Link className="action" to={paths.messages(partition.topic)}>
          Browse messages
        </Link>
      </h2>
      {partition.errorReason !== '' && (
        <div className="error" role="alert">
          <code>{partition.errorReason}</code>: {partition.errorMessage}
        </div>
      )}
      <Facts
        testId="partition-facts"
        rows={[
          ['writer owner', partition.ownerAddress || 'not owned now'],
          ['earliest offset', String(partition.earliestOffset)],
          ['latest offset', String(partition.latestOffset)],
          ['entries', formatCount(partition.entries)],
          ['size', formatBytes(partition.sizeBytes)],
          ['producers', partition.producers],
          ['in / out', `${formatRate(partition.messagesInPerSecond)} / ${formatRate(partition.messagesOutPerSecond)}`],
        ]}
      />
      <h3>Ledgers</h3>
      <Ledgers partition={partition} />
      <h3>Subscriptions</h3>
      <Subscriptions partition={partition} />
    </div>
  );
}

/**
 * A partitioned topic's partitions, one row each with what tells them apart
 * at a glance (owner, offsets, backlog, rates); each links to that
 * partition's own page, which has its ledgers and subscriptions.
 */
function Partitions({ topic }: { topic: GetTopicSummaryResponse }) {
  return (
    <Table
      testId="partitions"
      head={['partition', 'writer owner', 'earliest offset', 'next offset', 'backlog', 'size', 'in / out']}
      rows={topic.partitionSummaries.map((partition) => [
        <Link to={paths.topic(partition.topic)}>{partition.index}</Link>,
        partition.errorReason !== '' ? (
          <span className="error">
            <code>{partition.errorReason}</code>: {partition.errorMessage}
          </span>
        ) : (
          partition.ownerAddress || 'not owned now'
        ),
        String(partition.earliestOffset),
        String(partition.latestOffset),
        formatCount(partition.backlogMessages),
        formatBytes(partition.sizeBytes),
        `${formatRate(partition.messagesInPerSecond)} / ${formatRate(partition.messagesOutPerSecond)}`,
      ])}
      empty="No partitions."
    />
  );
}

/** What a topic is: partitioned (with how many), one partition of one (linked), or neither. */
function TopicKind({ topic }: { topic: GetTopicSummaryResponse }) {
  if (topic.partitions > 0) return <>{topic.partitions} partitions</>;
  if (topic.partitionedTopic === '') return <>not partitioned</>;
  return (
    <>
      partition {topic.partitionSummaries[0]?.index} of{' '}
      <Link to={paths.topic(topic.partitionedTopic)}>{topic.partitionedTopic}</Link>
    </>
  );
}

function ReadonlyOwners({ topic }: { topic: GetTopicSummaryResponse }) {
  return (
    <Table
      testId="readonly-owners"
      head={['read-only owner', 'group', 'address', 'reader topic']}
      rows={topic.readonlyOwners.map((owner) => [
        owner.instanceId,
        owner.group,
        owner.advertisedAddress,
        owner.readerTopic,
      ])}
      empty="No read-only owner serves this topic."
    />
  );
}

export function TopicPage() {
  const topic = useParams()['topic'] ?? '';
  const state = useCall(() => consoleClient.getTopicSummary({ topic }), topic);
  return (
    <section data-testid="topic-page">
      <h1>{topic}</h1>
      <CallView state={state}>
        {(answer) => (
          <>
            <p className="muted" data-testid="topic-kind">
              <TopicKind topic={answer} /> · created {formatTime(answer.createdAtMs)}
            </p>
            {answer.partitions > 0 ? (
              <>
                <h2>Partitions</h2>
                {answer.partitionSummaries.length < answer.partitions && (
                  <p className="muted">Showing the first {answer.partitionSummaries.length} partitions.</p>
                )}
                <Partitions topic={answer} />
              </>
            ) : (
              answer.partitionSummaries.map((partition) => <Partition key={partition.topic} partition={partition} />)
            )}
            <h2>Read-only owners</h2>
            <ReadonlyOwners topic={answer} />
          </>
        )}
      </CallView>
    </section>
  );
}
