import { RawKafkaClient } from '@ledgerline/kafka-gateway/testing';
import { Kafka, logLevel, type Admin, type Consumer, type KafkaMessage } from 'kafkajs';

/** Every wait on a Kafka client is bounded: a gateway that neither answers nor fails fails the test. */
export const KAFKA_WAIT_MS = 20_000;

/** A message as the consumer got it, with its partition. */
export interface ReceivedMessage {
  partition: number;
  message: KafkaMessage;
}

/**
 * Runs the consumer until `count` messages arrived, rejecting after
 * KAFKA_WAIT_MS or on the consumer's failure; `autoCommit: false` leaves
 * commits to the test.
 */
export async function consumeMessages(
  consumer: Consumer,
  count: number,
  options: { autoCommit?: boolean } = {},
): Promise<ReceivedMessage[]> {
  const got: ReceivedMessage[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`received ${got.length} of ${count} messages`)), KAFKA_WAIT_MS);
    consumer
      .run({
        ...options,
        eachMessage: async ({ partition, message }) => {
          got.push({ partition, message });
          if (got.length === count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch((error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      });
  });
  return got;
}

/** What `work` failed with, or 'succeeded'; rejects when it does neither within KAFKA_WAIT_MS. */
export async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('neither succeeded nor failed')), KAFKA_WAIT_MS);
  });
  try {
    return await Promise.race([
      work().then(
        () => 'succeeded',
        (error: unknown) => error,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the admin specs talk to a gateway with: kafkajs (and its admin client) and a raw connection. */
export interface KafkaAdminClients {
  readonly kafka: Kafka;
  readonly admin: Admin;
  readonly raw: RawKafkaClient;
  close(): Promise<void>;
}

/** Connects kafkajs's admin client and a raw connection to the gateway at `broker` (`host:port`). */
export async function openKafkaAdmin(broker: string): Promise<KafkaAdminClients> {
  const kafka = new Kafka({
    clientId: 'spec',
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 50 },
  });
  const admin = kafka.admin();
  await admin.connect();
  const raw = await RawKafkaClient.open(Number(broker.slice(broker.lastIndexOf(':') + 1))).catch(
    async (error: unknown) => {
      await admin.disconnect();
      throw error;
    },
  );
  return {
    kafka,
    admin,
    raw,
    async close() {
      raw.end();
      await admin.disconnect();
    },
  };
}

/**
 * Opens the admin clients of the gateway at `run.broker` before a suite's
 * tests (handing them to `use`) and closes them after the suite.
 */
export function kafkaAdminPerSuite(run: { readonly broker: string }, use: (clients: KafkaAdminClients) => void): void {
  let clients: KafkaAdminClients | undefined;
  beforeAll(async () => {
    clients = await openKafkaAdmin(run.broker);
    use(clients);
  });
  afterAll(() => clients?.close());
}
