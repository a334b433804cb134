import { lazy, Suspense, useEffect, useState } from 'react';
import { OwnerRole } from '@gen/common_pb';
import type { GetOverviewResponse } from '@gen/console_pb';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView, Facts, Table } from '../components/call-view';
import type { RateSample } from '../components/rate-chart';
import { formatBytes, formatCount, formatDuration, formatRate, formatTime } from '../format/units';

// uPlot is the heaviest script of the first load (about 90 ms to compile and start on a slow core) and only the
// chart needs it: loaded beside the page, the owners and figures show without waiting for it.
const RateChart = lazy(() => import('../components/rate-chart').then((module) => ({ default: module.RateChart })));

/** How often the overview asks again, and how many samples the live chart keeps (two minutes). */
const REFRESH_MS = 2_000;
const CHART_SAMPLES = 60;

const ROLE_NAMES: Record<number, string> = {
  [OwnerRole.WRITER]: 'writer',
  [OwnerRole.READONLY]: 'read-only',
  [OwnerRole.KAFKA_GATEWAY]: 'Kafka gateway',
};

function useRateSamples(overview: GetOverviewResponse | undefined): RateSample[] {
  const [samples, setSamples] = useState<RateSample[]>([]);
  useEffect(() => {
    if (overview === undefined) return;
    const sample = {
      atSeconds: Number(overview.sampledAtMs) / 1000,
      inPerSecond: overview.messagesInPerSecond,
      outPerSecond: overview.messagesOutPerSecond,
    };
    setSamples((kept) => [...kept, sample].slice(-CHART_SAMPLES));
  }, [overview]);
  return samples;
}

function Services({ overview }: { overview: GetOverviewResponse }) {
  return (
    <Table
      testId="services"
      head={['service', 'address', 'status', 'detail']}
      rows={overview.services.map((service) => [service.service, service.address, service.status, service.detail])}
    />
  );
}

function Owners({ overview }: { overview: GetOverviewResponse }) {
  const rows = overview.owners.map((owner) => [
    owner.instanceId,
    ROLE_NAMES[owner.role] ?? 'unknown',
    owner.group,
    owner.advertisedAddress,
    owner.load?.topicsOwned ?? 0,
    owner.role === OwnerRole.WRITER ? formatBytes(owner.load?.storageBytes ?? 0n) : '—',
    formatRate(owner.load?.messagesInPerSecond ?? 0),
    formatRate(owner.load?.messagesOutPerSecond ?? 0),
    owner.load === undefined ? '—' : `${(owner.load.cpuShare * 100).toFixed(0)} %`,
    owner.load?.consumers ?? 0,
  ]);
  return (
    <Table
      testId="owners"
      head={['owner', 'role', 'group', 'address', 'topics', 'storage', 'in', 'out', 'CPU', 'consumers']}
      rows={rows}
      empty="No owner registered."
    />
  );
}

function BalancerMoves({ overview }: { overview: GetOverviewResponse }) {
  const balancer = overview.balancer;
  const moves = [...(balancer?.recentMoves ?? [])].reverse();
  return (
    <>
      <p className="muted">
        {balancer?.active === true
          ? `Leader ${balancer.leaderId}, ${formatCount(balancer.rounds)} rounds, ${formatCount(balancer.movesTotal)} moves, last round ${formatTime(balancer.lastRoundAtMs)}.`
          : 'No balancer round has finished yet.'}
      </p>
      <Table
        testId="balancer-moves"
        head={['when', 'topic', 'from', 'to', 'reason', 'outcome', 'paused']}
        rows={moves.map((move) => [
          formatTime(move.atMs),
          move.topic,
          move.fromInstanceId,
          move.toInstanceId,
          move.reason,
          move.outcome,
          formatDuration(move.pausedMs),
        ])}
        empty="No moves yet."
      />
    </>
  );
}

export function OverviewPage() {
  const state = useCall(() => consoleClient.getOverview({}), 'overview', REFRESH_MS);
  const samples = useRateSamples(state.data);
  return (
    <section data-testid="overview-page">
      <h1>Overview</h1>
      <CallView state={state}>
        {(overview) => (
          <>
            <Facts
              testId="overview-facts"
              rows={[
                ['messages in', formatRate(overview.messagesInPerSecond)],
                ['messages out', formatRate(overview.messagesOutPerSecond)],
                ['bytes in', formatRate(overview.bytesInPerSecond / 1024, 'KiB/s')],
                ['bytes out', formatRate(overview.bytesOutPerSecond / 1024, 'KiB/s')],
                [
                  'storage used',
                  // Not exact: the writer owners' sums over the topics they have loaded now (see console.proto).
                  `${formatBytes(overview.storageUsedBytes)}${overview.storageExact ? '' : ' in loaded topics'}`,
                ],
                ['topics owned', formatCount(overview.topicsOwned)],
                ['tenants', formatCount(overview.tenants)],
                ['namespaces', formatCount(overview.namespaces)],
              ]}
            />
            <h2>Message rates</h2>
            <Suspense fallback={<div className="chart" data-testid="rate-chart-loading" />}>
              <RateChart samples={samples} />
            </Suspense>
            <h2>Services</h2>
            <Services overview={overview} />
            <h2>Owners</h2>
            <Owners overview={overview} />
            <h2>Balancer</h2>
            <BalancerMoves overview={overview} />
          </>
        )}
      </CallView>
    </section>
  );
}
