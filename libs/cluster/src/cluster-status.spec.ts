import { formatClusterStatus, leasesHeld, metricSum } from './cluster-status.js';

const METRICS = [
  '# HELP ledgerline_writer_leases_held Topic leases this instance holds',
  '# TYPE ledgerline_writer_leases_held gauge',
  'ledgerline_writer_leases_held{service="writer-owner"} 3',
  'ledgerline_writer_publish_failures_total{reason="STORE_UNAVAILABLE",service="writer-owner"} 2',
  'ledgerline_writer_publish_failures_total{reason="TOPIC_UNLOADED",service="writer-owner"} 5',
  'ledgerline_writer_publish_failures_total_other 100',
].join('\n');

describe('cluster status helpers', () => {
  it('reads the leases an owner holds from its metrics, and nothing from a process without them', () => {
    expect(leasesHeld(METRICS)).toBe(3);
    expect(leasesHeld('ledgerline_gc_owned_shards 16')).toBeUndefined();
  });

  it('sums a metric over its label sets and ignores metrics that only share its prefix', () => {
    expect(metricSum(METRICS, 'ledgerline_writer_publish_failures_total')).toBe(7);
    expect(metricSum(METRICS, 'ledgerline_missing_total')).toBe(0);
  });

  it('prints one aligned row per process under a header', () => {
    const lines = formatClusterStatus([
      {
        name: 'redis',
        role: 'redis',
        pid: 10,
        alive: true,
        address: '127.0.0.1:1',
        health: '-',
        ownedTopics: undefined,
      },
      {
        name: 'writer-owner-0',
        role: 'writer-owner',
        pid: 12345,
        alive: false,
        address: '127.0.0.1:23456',
        health: 'UNREACHABLE',
        ownedTopics: 2,
      },
    ]);
    expect(lines).toEqual([
      'NAME            ROLE          PID    ADDRESS          PROCESS  HEALTH       OWNED TOPICS',
      'redis           redis         10     127.0.0.1:1      running  -            -',
      'writer-owner-0  writer-owner  12345  127.0.0.1:23456  gone     UNREACHABLE  2',
    ]);
  });
});
