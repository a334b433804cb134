import { writeFileSync } from 'node:fs';
import { createClient, type Consumer, type Message } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient } from '@ledgerline/rpc';
import { acksFromSupersededOwners, type OwnedAck } from './ack-owners.js';

/*
 * The load a pod test runs from a client pod (node --import tsx, inside the
 * pod's network namespace, so every name goes through its hosts file): a
 * producer with deduplication publishes unique payloads and records each
 * acknowledgement, a consumer acknowledges what it receives. On SIGTERM it
 * stops producing, waits for the consumer to catch up, reads the topic back
 * from offset 0 and prints one JSON summary line: acknowledged, failed,
 * lost, duplicated (stored twice), unconsumed, offset gaps, redelivered
 * after its ack was persisted, and the longest stretch without an
 * acknowledgement.
 */

/** Sends in flight at once. */
const MAX_IN_FLIGHT = 16;
/** Payloads stored twice that the summary names, with where each copy is. */
const MAX_STORED_TWICE_SHOWN = 5;
/** How long without a new acknowledgement before the workload reports a stall (and again each time as long). */
const STALL_REPORT_MS = 5_000;
/** How long the consumer gets to catch up after producing stops. */
const CATCH_UP_MS = 60_000;

const [service, name, acksFile] = process.argv.slice(2);
if (service === undefined || name === undefined) {
  process.stderr.write('usage: pod-workload-main <metadata host:port> <name>\n');
  process.exit(2);
}
const topic = `persistent://${name}/ns/load`;
const acks: (OwnedAck & { payload: string; offset: bigint })[] = [];
const failures: string[] = [];
const consumed = new Set<string>();
/** Payloads whose consumer ack the owner confirmed persisted (ackReceipts): none may be delivered again. */
const ackPersisted = new Set<string>();
let redeliveredAfterAck = 0;
/** Why the consumer stopped receiving before it was closed, and when it last received. */
const consumerStops: string[] = [];
let lastReceivedAtMs = 0;
let closing = false;
let running = true;

function print(body: Record<string, unknown>): void {
  process.stdout.write(
    `${JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value))}\n`,
  );
}

async function prepare(): Promise<void> {
  const admin = createRpcClient(AdminService, service!);
  try {
    await admin.createTenant({ tenant: name! });
    await admin.createNamespace({
      namespace: `${name}/ns`,
      policies: { retentionTimeMinutes: -1n, retentionSizeMb: -1n },
    });
    await admin.createTopic({ topic });
  } finally {
    closeClient(admin);
  }
}

/** The subscription's consumer now: a new one replaces one that gave up. */
let consumer: Consumer | undefined;

/**
 * Receives and acknowledges until closed. A consumer that gives up while the
 * workload runs is recorded in consumerStops and replaced by a new one on the
 * same subscription, as an application would, so what it never received is
 * redelivered and still counts against `unconsumed` if it never arrives.
 */
async function consume(client: ReturnType<typeof createClient>): Promise<void> {
  while (!closing) {
    try {
      consumer = await client.subscribe({
        topic,
        subscription: 'load',
        initialPosition: 'earliest',
        ackReceipts: true,
      });
    } catch (error) {
      consumerStops.push(`subscribe: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    for (;;) {
      let message: Message;
      try {
        message = await consumer.receive();
      } catch (error) {
        if (!closing) consumerStops.push(String(error));
        break;
      }
      lastReceivedAtMs = Date.now();
      const payload = Buffer.from(message.payload).toString();
      if (ackPersisted.has(payload)) redeliveredAfterAck++;
      consumed.add(payload);
      consumer.ack(message).then(
        () => void ackPersisted.add(payload),
        () => undefined,
      );
    }
  }
}

async function readBack(client: ReturnType<typeof createClient>): Promise<Record<string, unknown>> {
  const [stats] = await client.topicStats(topic);
  const stored = Number(stats!.stats.nextOffset);
  const reader = await client.reader({ topic, start: 'earliest' });
  const offsetOf = new Map<string, bigint>();
  const placeOf = new Map<string, string>();
  let duplicated = 0;
  let gaps = 0;
  // Where the first few payloads stored twice are (offset, ledger:entry), to tell which owner wrote each copy.
  const storedTwice: string[] = [];
  try {
    for (let index = 0; index < stored; index++) {
      const message = await reader.readNext();
      const payload = Buffer.from(message.payload).toString();
      const place = `${message.offset} (${message.messageId.ledgerId}:${message.messageId.entryId})`;
      if (message.offset !== BigInt(index)) gaps++;
      if (offsetOf.has(payload)) {
        duplicated++;
        if (storedTwice.length < MAX_STORED_TWICE_SHOWN)
          storedTwice.push(`${payload} at ${placeOf.get(payload)} and ${place}`);
      }
      offsetOf.set(payload, message.offset);
      placeOf.set(payload, place);
    }
  } finally {
    await reader.close();
  }
  const lost = acks.filter((ack) => !offsetOf.has(ack.payload)).length;
  const misplaced = acks.filter(
    (ack) => offsetOf.has(ack.payload) && !ack.duplicate && offsetOf.get(ack.payload) !== ack.offset,
  ).length;
  return { stored, lost, duplicated, gaps, misplaced, storedTwice };
}

function longestGapMs(startedMs: number, endedMs: number): number {
  let longest = 0;
  let previous = startedMs;
  for (const ack of [...acks].sort((a, b) => a.atMs - b.atMs)) {
    longest = Math.max(longest, ack.atMs - previous);
    previous = ack.atMs;
  }
  return Math.max(longest, endedMs - previous);
}

async function main(): Promise<void> {
  await prepare();
  const client = createClient({ serviceUrl: service!, maxReconnectAttempts: 400, reconnectMaxDelayMs: 500 });
  const producer = await client.producer({ topic, producerName: `${name}-producer`, batching: false });
  const consuming = consume(client);
  const startedMs = Date.now();
  process.once('SIGTERM', () => (running = false));
  print({ event: 'producing', topic });
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let reported = 0;
  // A stall says so while it lasts (what is in flight, the last failure), so a spec that times out shows it.
  let ackedAtLastLook = 0;
  const stallWatch = setInterval(() => {
    if (acks.length === ackedAtLastLook)
      print({ event: 'stalled', acked: acks.length, inFlight: inFlight.size, lastFailure: failures.at(-1) });
    ackedAtLastLook = acks.length;
  }, STALL_REPORT_MS);
  while (running) {
    const payload = `m${sent++}`;
    const sentAtMs = Date.now();
    const send = producer.send(payload).then(
      (receipt) =>
        void acks.push({
          payload,
          offset: receipt.offset,
          duplicate: receipt.duplicate,
          ledgerId: receipt.messageId.ledgerId,
          sentAtMs,
          atMs: Date.now(),
        }),
      (error: unknown) => void failures.push(`${payload}: ${String(error)}`),
    );
    const tracked = send.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    if (acks.length - reported >= 200) print({ event: 'acks', count: (reported = acks.length) });
  }
  await Promise.all(inFlight);
  clearInterval(stallWatch);
  const endedMs = Date.now();
  await producer.close();
  const catchUpDeadline = Date.now() + CATCH_UP_MS;
  while (acks.some((ack) => !consumed.has(ack.payload)) && Date.now() < catchUpDeadline)
    await new Promise((resolve) => setTimeout(resolve, 200));
  const check = await readBack(client);
  closing = true;
  await consumer?.close().catch(() => undefined);
  await consuming;
  await client.close();
  // Every acknowledgement for a test that lines them up with the faults it injected (payload, offset, when, ledger, whether a duplicate, when sent).
  if (acksFile !== undefined)
    writeFileSync(
      acksFile,
      JSON.stringify(
        acks.map((ack) => [
          ack.payload,
          Number(ack.offset),
          ack.atMs,
          Number(ack.ledgerId),
          ack.duplicate ? 1 : 0,
          ack.sentAtMs,
        ]),
      ),
    );
  print({
    event: 'summary',
    sent,
    acked: acks.length,
    failed: failures.length,
    firstFailures: failures.slice(0, 5),
    unconsumed: acks.filter((ack) => !consumed.has(ack.payload)).length,
    redeliveredAfterAck,
    consumerStops,
    lastReceivedMsAgo: Date.now() - lastReceivedAtMs,
    longestGapMs: longestGapMs(startedMs, endedMs),
    overlappingOwners: acksFromSupersededOwners(acks),
    ...check,
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`pod workload failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
