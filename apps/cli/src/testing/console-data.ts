import { setImmediate as nextTurn } from 'node:timers/promises';
import { Metadata } from '@grpc/grpc-js';
import { createClient, type LedgerlineClient, type SendReceipt } from '@ledgerline/client';
import { AdminService, CursorsService, InitialPosition } from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient } from '@ledgerline/rpc';

// Realistic data for the web console's browser specs and its screenshots:
// a tenant with a namespace of JSON orders, a partitioned topic, a
// subscription with holes and redeliveries, a namespace of many topics and a
// subscription with many holes. Everything goes through the public APIs.

/** The admin path CreateTopics takes at most this many names per call. */
const CREATE_TOPICS_BATCH = 10_000;
/** Sends in flight at once while filling a topic: the producer's window, not a guess at speed. */
const SEND_WINDOW = 2_000;
/** Acked ranges per UpdateCursor call: well inside gRPC's 4 MiB message bound. */
const RANGES_PER_UPDATE = 10_000;

export const SHOWCASE = {
  tenant: 'acme',
  namespace: 'acme/orders',
  topic: 'persistent://acme/orders/payments',
  partitioned: 'persistent://acme/orders/events',
  subscription: 'billing',
  /** Messages in the payments topic: `before` of them, then the time boundary, then `after`. */
  before: 10,
  after: 10,
} as const;

export interface Showcase {
  /** A time after every message of the first batch and before every message of the second (ms). */
  readonly boundaryMs: number;
  /** What offset 3 of the payments topic holds, as a console shows it. */
  readonly sampleKey: string;
}

/** Order n as JSON, as an application would publish it. */
export function orderPayload(n: number): string {
  return JSON.stringify({ order: n, customer: `customer-${n % 4}`, amountCents: 1_000 + n * 25, currency: 'EUR' });
}

/** Resolves once the clock has moved past `ms`: a bound of one millisecond, not a guess. */
async function clockPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await nextTurn();
}

async function sendOrders(client: LedgerlineClient, topic: string, from: number, count: number): Promise<void> {
  const producer = await client.producer({ topic, batching: false, producerName: `console-showcase-${from}` });
  for (let n = from; n < from + count; n++) {
    await producer.send(orderPayload(n), {
      key: `customer-${n % 4}`,
      properties: { source: 'web', region: 'eu-west' },
    });
  }
  await producer.close();
}

/** A subscription that read every message, acknowledged most, left holes and asked for one again. */
async function subscriptionWithHoles(client: LedgerlineClient, topic: string, messages: number): Promise<void> {
  const consumer = await client.subscribe({
    topic,
    subscription: SHOWCASE.subscription,
    type: 'Shared',
    initialPosition: 'earliest',
  });
  for (let read = 0; read < messages; read++) {
    const message = await consumer.receive();
    const offset = Number(message.offset);
    if (offset === 2) consumer.nack(message);
    else if (offset >= 6 && offset % 3 !== 0) await consumer.ack(message);
  }
  await consumer.flushAcks();
  await consumer.close();
}

/** The metadata that carries `token`, as the SDK sends it; empty without one. */
export function bearer(token: string | undefined): Metadata {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** The showcase: tenant, namespace with policies, a topic of orders with a subscription, a partitioned topic. */
export async function seedShowcase(serviceUrl: string, token?: string): Promise<Showcase> {
  const admin = createRpcClient(AdminService, serviceUrl, { defaultMetadata: bearer(token) });
  const client = createClient({ serviceUrl, ...(token === undefined ? {} : { token }) });
  try {
    await admin.createTenant({ tenant: SHOWCASE.tenant, adminRoles: ['orders-team'] });
    await admin.createNamespace({
      namespace: SHOWCASE.namespace,
      policies: { retentionTimeMinutes: 1_440n, retentionSizeMb: 10_240n, numberOfTopicBuckets: 8 },
    });
    await admin.createTopic({ topic: SHOWCASE.topic });
    await admin.createTopic({ topic: SHOWCASE.partitioned, partitions: 3 });
    await sendOrders(client, SHOWCASE.topic, 0, SHOWCASE.before);
    const boundaryMs = Date.now();
    await clockPast(boundaryMs);
    await sendOrders(client, SHOWCASE.topic, SHOWCASE.before, SHOWCASE.after);
    await subscriptionWithHoles(client, SHOWCASE.topic, SHOWCASE.before + SHOWCASE.after);
    return { boundaryMs: boundaryMs + 1, sampleKey: 'customer-3' };
  } finally {
    await client.close();
    closeClient(admin);
  }
}

/** `count` topics named t000000 … in `namespace` (created with `buckets` topic buckets), through CreateTopics. */
export async function createManyTopics(
  serviceUrl: string,
  namespace: string,
  count: number,
  buckets: number,
): Promise<void> {
  const admin = createRpcClient(AdminService, serviceUrl);
  try {
    await admin.createNamespace({ namespace, policies: { numberOfTopicBuckets: buckets } });
    for (let start = 0; start < count; start += CREATE_TOPICS_BATCH) {
      const names = Array.from(
        { length: Math.min(CREATE_TOPICS_BATCH, count - start) },
        (_, index) => `${namespace}/t${String(start + index).padStart(6, '0')}`,
      );
      await admin.createTopics({ topics: names });
    }
  } finally {
    closeClient(admin);
  }
}

async function fill(client: LedgerlineClient, topic: string, entries: number): Promise<SendReceipt[]> {
  const producer = await client.producer({ topic, batching: false });
  const receipts: SendReceipt[] = [];
  for (let start = 0; start < entries; start += SEND_WINDOW) {
    const count = Math.min(SEND_WINDOW, entries - start);
    receipts.push(
      ...(await Promise.all(Array.from({ length: count }, (_, index) => producer.send(`m${start + index}`)))),
    );
  }
  await producer.close();
  return receipts;
}

/**
 * A subscription on a new topic whose every other entry is acknowledged:
 * `holes` unacknowledged entries with an acknowledged one between each two,
 * so the cursor holds `holes` acknowledged ranges (as a slow Shared consumer
 * leaves them). The acks go to the writer owner as CursorsService deltas.
 */
export async function subscriptionOfManyHoles(serviceUrl: string, topic: string, subscription: string, holes: number) {
  const client = createClient({ serviceUrl });
  const cursors = createRpcClient(CursorsService, serviceUrl);
  const admin = createRpcClient(AdminService, serviceUrl);
  try {
    await admin.createTopic({ topic });
    const receipts = await fill(client, topic, holes * 2);
    await cursors.createCursor({
      topic,
      subscription,
      start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
    });
    const acked = receipts.filter((_, index) => index % 2 === 1).map(({ messageId }) => messageId);
    for (let start = 0; start < acked.length; start += RANGES_PER_UPDATE) {
      const ackedRanges = acked
        .slice(start, start + RANGES_PER_UPDATE)
        .map((id) => ({ ledgerId: id.ledgerId, firstEntryId: id.entryId, lastEntryId: id.entryId }));
      await cursors.updateCursor({
        topic,
        subscription,
        update: { case: 'delta', value: { ackedRanges } },
        withoutRanges: true,
      });
    }
  } finally {
    await client.close();
    closeClient(cursors);
    closeClient(admin);
  }
}
