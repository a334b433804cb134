import { execFile } from 'node:child_process';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// Kafka's limits and edge cases of what it accepts, as real clients meet
// them against standalone's gateway: each answered with Kafka's own error
// code and nothing stored, or accepted and read back as Kafka returns it.

const PYTHON = '/usr/bin/python3';
const RUN_TIMEOUT_MS = 60_000;

/** Runs a kafka-python snippet given the broker as sys.argv[1]; its stdout's last line, parsed as JSON. */
function python(script: string, broker: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', script, broker], { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kafka-python failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}

describe('Kafka limits against standalone', () => {
  const kafka = kafkaStandaloneRun('kafka-limits');

  describe('CreateTopics', () => {
    it('refuses a topic named twice in one request with INVALID_REQUEST and creates it under neither entry (kafka-python)', async () => {
      const answer = await python(
        `
import json, sys
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import InvalidRequestError
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1])
try:
    admin.create_topics([NewTopic('dup', 1, 1), NewTopic('dup', 2, 1), NewTopic('solo', 1, 1)])
    refused = None
except InvalidRequestError as error:
    refused = type(error).__name__
topics = sorted(t for t in admin.list_topics() if t in ('dup', 'solo'))
print(json.dumps({'refused': refused, 'topics': topics}))
`,
        kafka.broker,
      );
      expect(answer).toEqual({ refused: 'InvalidRequestError', topics: ['solo'] });
    });
  });
});
