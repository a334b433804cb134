import type { KafkaGroup } from '@gen/console_pb';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView, Table } from '../components/call-view';
import { formatCount } from '../format/units';

function Group({ group }: { group: KafkaGroup }) {
  return (
    <div className="card" data-testid="kafka-group" data-group={group.groupId}>
      <h2>
        {group.groupId} <span className="muted">{group.state}</span>
      </h2>
      <p className="muted">
        {group.protocolType} {group.protocol} · {group.members.length} members · total lag {formatCount(group.totalLag)}
      </p>
      <Table
        head={['member', 'client', 'host', 'assignments']}
        rows={group.members.map((member) => [
          member.memberId,
          member.clientId,
          member.clientHost,
          member.assignments.join(', '),
        ])}
        empty="No members (the group is empty)."
      />
      <Table
        testId="kafka-lag"
        head={['topic', 'partition', 'committed', 'log end', 'lag']}
        rows={group.partitions.map((partition) => [
          partition.topic,
          partition.partition,
          partition.committedOffset < 0n ? 'none' : String(partition.committedOffset),
          String(partition.logEndOffset),
          formatCount(partition.lag),
        ])}
        empty="No committed offsets."
      />
    </div>
  );
}

export function KafkaPage() {
  const state = useCall(() => consoleClient.listKafkaGroups({}), 'kafka', 5_000);
  return (
    <section data-testid="kafka-page">
      <h1>Kafka consumer groups</h1>
      <CallView state={state}>
        {(answer) =>
          !answer.reachable ? (
            <div className="error" role="alert">
              No Kafka gateway answered: <code>{answer.errorReason}</code>
            </div>
          ) : answer.groups.length === 0 ? (
            <p className="muted">No consumer groups.</p>
          ) : (
            answer.groups.map((group) => <Group key={group.groupId} group={group} />)
          )
        }
      </CallView>
    </section>
  );
}
