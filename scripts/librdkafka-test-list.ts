/**
 * Which of librdkafka's tests scripts/librdkafka-tests.ts runs against one
 * standalone, and why the others are left out. libs/kafka-gateway/README.md
 * lists the same exclusions for readers; this table is what the run obeys.
 */

export interface SuiteTest {
  /** The suite's name, e.g. `0070_null_empty`. */
  name: string;
  /** Its four digits, what the suite's TESTS variable matches. */
  number: string;
  /** The flags field of its `_TEST(...)` entry in test.c, as written. */
  flags: string;
}

const TRANSACTIONS =
  'transactions (InitProducerId with a transactional.id, AddPartitionsToTxn, EndTxn) are not served yet: ' +
  'the gateway refuses them at once (issue 42, item 4)';
const KAFKA_TOOLS =
  'runs Kafka’s own tools (kafka-topics.sh, kafka-configs.sh: the suite’s KAFKA_PATH), which a Ledgerline machine does not have';
const SHARE_GROUPS = 'share groups (KIP-932, Kafka 4.1) are not served';

/** Tests a single standalone cannot serve, by name, each with the reason. */
export const EXCLUDED: ReadonlyMap<string, string> = new Map([
  ['0055_producer_latency', `its transactional sub-tests: ${TRANSACTIONS}`],
  ['0061_consumer_lag', `it reads transactional data with read_committed: ${TRANSACTIONS}`],
  ['0098_consumer_txn', TRANSACTIONS],
  ['0103_transactions', TRANSACTIONS],
  ['0129_fetch_aborted_msgs', TRANSACTIONS],
  ['0052_msg_timestamps', KAFKA_TOOLS],
  ['0077_compaction', KAFKA_TOOLS],
  ['0109_auto_create_topics', KAFKA_TOOLS],
  ['0101_fetch_from_follower', 'needs several brokers in racks (KIP-392 follower fetching between Kafka brokers)'],
  ['0097_ssl_verify', 'needs the suite’s SSL fixtures (a CA, broker and client keystores) on an SSL listener'],
  ['0115_producer_auth', 'needs ACLs set up with Kafka’s own tools on a SASL listener'],
  ['0119_consumer_auth', 'needs ACLs set up with Kafka’s own tools on a SASL listener'],
  ['0126_oauthbearer_oidc', 'needs an OIDC token endpoint (the suite’s trivup setup)'],
  ['0135_sasl_credentials', 'needs a SASL/PLAIN or SCRAM listener with the suite’s users'],
  ['0142_reauthentication', 'needs a SASL listener with the suite’s users and connections.max.reauth.ms'],
  ...[
    '0170_share_consumer_subscription',
    '0171_share_consumer_consume',
    '0172_share_consumer_acknowledge',
    '0173_share_consumer_commit_async',
    '0174_share_consumer_concurrency',
    '0175_share_consumer_groups',
    '0176_share_consumer_commit_sync',
    '0177_share_consumer_transactions',
    '0178_share_consumer_close',
    '0179_share_consumer_destroy',
    '0180_share_consumer_config',
    '0181_share_consumer_topic_delete',
    '0184_share_consumer_topic_recreate',
    '0185_share_consumer_max_poll_interval',
  ].map((name): [string, string] => [name, SHARE_GROUPS]),
]);

/**
 * Tests run as the suite runs them on its own clusters, each with the
 * reason: in its full mode (without `-Q`), against a second standalone with
 * Kafka's default group.initial.rebalance.delay.ms (3 s) where the first one
 * has none.
 */
export const AS_ON_KAFKA: ReadonlyMap<string, string> = new Map([
  [
    '0102_static_group_rebalance',
    'static membership (KIP-345): quick mode skips every sub-test of it, and its two static members must form ' +
      'the first generation together, which the 3 s initial delay of Kafka’s brokers gives them',
  ],
]);

/**
 * The subset CI runs: quick tests (seconds each) that cover produce, consume,
 * groups, commits, headers, nulls, timestamps and admin, so a regression in
 * any of them shows in CI while the full run stays a documented command.
 */
export const QUICK_SUBSET: readonly string[] = [
  '0001_multiobj',
  '0002_unkpart',
  '0005_order',
  '0012_produce_consume',
  '0013_null_msgs',
  '0015_offsets_seek',
  '0017_compression',
  '0021_rkt_destroy',
  '0030_offset_commit',
  '0031_get_offsets',
  '0035_api_version',
  '0070_null_empty',
  '0073_headers',
  '0085_headers',
  '0099_commit_metadata',
];

/** Every `_TEST(name, flags...)` entry of test.c's tests[] in the 0000-0999 range. */
export function suiteTests(testSource: string): SuiteTest[] {
  const start = testSource.indexOf('struct test tests[] = {');
  if (start < 0) throw new Error('test.c has no tests[] table: not librdkafka’s test suite?');
  const table = testSource.slice(start, testSource.indexOf('\n};', start));
  const tests: SuiteTest[] = [];
  for (const match of table.matchAll(/_TEST\(\s*(([0-9]{4})_\w+)\s*,\s*([^,)]*)/g)) {
    const [, name = '', number = '', flags = ''] = match;
    if (number < '1000') tests.push({ name, number, flags: flags.trim() });
  }
  return tests;
}

/** Why the suite's own flags leave a test out of a run against one broker, if they do. */
function flaggedOut(test: SuiteTest): string | undefined {
  const flags = test.flags.split('|').map((flag) => flag.trim());
  if (flags.includes('TEST_F_LOCAL')) return 'local: librdkafka alone or its mock cluster, no broker';
  if (flags.includes('TEST_F_MANUAL')) return 'manual: started by hand only';
  if (flags.includes('TEST_F_SOCKEM')) return 'needs socket emulation, which the suite’s quick mode (-E) leaves out';
  if (flags.includes('TEST_F_KNOWN_ISSUE')) return 'librdkafka marks it a known issue of its own';
  return undefined;
}

/**
 * The tests to run (all broker tests not excluded, or those named in `only`
 * by name or number) and the excluded ones that were asked for or would have
 * run, in the suite's order. The suite picks tests by number, so tests that
 * share one (0045 has six) run together, in one test-runner.
 */
export function selectTests(
  all: readonly SuiteTest[],
  only: readonly string[],
): { run: SuiteTest[]; excluded: SuiteTest[] } {
  const wanted = (test: SuiteTest): boolean =>
    only.length === 0 || only.includes(test.name) || only.includes(test.number);
  const candidates = all.filter((test) => wanted(test) && flaggedOut(test) === undefined);
  return {
    run: candidates.filter((test) => !EXCLUDED.has(test.name)),
    excluded: candidates.filter((test) => EXCLUDED.has(test.name)),
  };
}
