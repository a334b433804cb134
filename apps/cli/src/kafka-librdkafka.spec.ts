import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';
import { take } from './testing/take-messages.js';

// confluent-kafka 1.7 on librdkafka 2.0 (Debian's python3-confluent-kafka,
// installed by .ci/run): librdkafka's own producer, what most Kafka clients
// wrap, against what librdkafka's test suite found (scripts/librdkafka-tests.sh).
// Debian's interpreter, not whichever python3 comes first on PATH.

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, 'testing', 'confluent-kafka-client.py');
const RUN_TIMEOUT_MS = 60_000;

function librdkafka(args: readonly string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, ...args], { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`confluent-kafka ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

describe('librdkafka (confluent-kafka) against standalone', () => {
  const kafka = kafkaStandaloneRun('librdkafka');

  it('refuses init_transactions with a fatal error that says why, where it used to retry until its timeout', async () => {
    const outcome = await librdkafka(['init-transactions', kafka.broker, 'orders-tx']);
    // _TIMED_OUT (COORDINATOR_NOT_AVAILABLE retried for 30 s) was the old answer.
    expect(outcome).toMatchObject({ error: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', fatal: true, retriable: false });
    expect(outcome['reason']).toContain('transactions are not served');
  });

  it('reads the Metadata of a gateway that serves v0-v12 in the version it negotiates', async () => {
    // librdkafka takes the highest version both sides serve: Debian's 2.0 stops at v4; later 2.x releases (the
    // test suite's 2.15.1) ask for v12, with topic ids, which kafka-topic-ids.spec.ts sends raw.
    const outcome = (await librdkafka(['metadata', kafka.broker, 'metadata-versions'])) as {
      metadataVersions: number[];
    };
    expect(outcome).toMatchObject({ error: null, partitions: 1 });
    expect(outcome.metadataVersions.length).toBeGreaterThan(0);
    expect(Math.max(...outcome.metadataVersions)).toBeLessThanOrEqual(12);
  });

  it('keeps a null value apart from an empty one, and repeated, ordered and null headers, through Fetch (0070, 0073, 0085)', async () => {
    expect(await librdkafka(['produce-nulls', kafka.broker, 'tombstones'])).toEqual({ errors: [], undelivered: 0 });
    const { records } = (await librdkafka(['consume', kafka.broker, 'tombstones', '3'])) as { records: unknown[] };
    expect(records).toEqual([
      { offset: 0, key: 'gone', value: null, headers: [] },
      { offset: 1, key: '', value: '', headers: [] },
      {
        offset: 2,
        key: null,
        value: 'v',
        headers: [
          ['multi', 'a'],
          ['single', 'x'],
          ['multi', null],
          ['multi', ''],
        ],
      },
    ]);
    // The SDK reads the properties it always did: one text value per name, the last one.
    const reader = await kafka.client.reader({ topic: 'public/default/tombstones', start: { offset: 2 } });
    const [read] = await take(reader, 1);
    await reader.close();
    expect(read!.properties).toMatchObject({ multi: '', single: 'x' });
  });
});
