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
            <p className="muted">
              {answer.partitions > 0 ? `${answer.partitions} partitions` : 'not partitioned'} · created{' '}
              {formatTime(answer.createdAtMs)}
            </p>
            {answer.partitionSummaries.map((partition) => (
              <Partition key={partition.topic} partition={partition} />
            ))}
            <h2>Read-only owners</h2>
            <ReadonlyOwners topic={answer} />
          </>
        )}
      </CallView>
    </section>
  );
}
