import { createClient } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient } from '@ledgerline/rpc';

/*
 * Work for the garbage collector in a pod test (run in a client pod with
 * node --import tsx): `fill` makes <topics> topics in namespace <name>/ns
 * with <messages> messages and a subscription each, so every topic holds a
 * ledger and a cursor ledger; `delete` deletes them one by one, printing its
 * progress, so the collector has ledgers to delete while the test cuts it off.
 */

const [phase, service, name, topicsArg, messagesArg] = process.argv.slice(2);
const TOPICS = Number(topicsArg);
const MESSAGES = Number(messagesArg ?? '0');
if ((phase !== 'fill' && phase !== 'delete') || service === undefined || name === undefined || !(TOPICS > 0)) {
  process.stderr.write('usage: gc-load-main fill|delete <metadata host:port> <name> <topics> [messages]\n');
  process.exit(2);
}
const topicName = (index: number): string => `persistent://${name}/ns/t${index}`;

function print(body: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(body)}\n`);
}

async function fill(): Promise<void> {
  const admin = createRpcClient(AdminService, service!);
  const client = createClient({ serviceUrl: service!, maxReconnectAttempts: 50 });
  try {
    await admin.createTenant({ tenant: name! });
    await admin.createNamespace({ namespace: `${name}/ns` });
    for (let index = 0; index < TOPICS; index++) {
      const topic = topicName(index);
      await admin.createTopic({ topic });
      const consumer = await client.subscribe({ topic, subscription: 'gc', initialPosition: 'earliest' });
      const producer = await client.producer({ topic, batching: false });
      await Promise.all(Array.from({ length: MESSAGES }, (_, i) => producer.send(`${topic} ${i}`)));
      await producer.close();
      await consumer.close();
    }
    print({ event: 'filled', topics: TOPICS });
  } finally {
    closeClient(admin);
    await client.close();
  }
}

async function remove(): Promise<void> {
  const admin = createRpcClient(AdminService, service!);
  try {
    let ledgers = 0;
    for (let index = 0; index < TOPICS; index++) {
      ledgers += (await admin.deleteTopic({ topic: topicName(index) }, { deadlineMs: 30_000 })).deletableLedgerIds
        .length;
      print({ event: 'deleted', count: index + 1, ledgers });
    }
    print({ event: 'all-deleted', count: TOPICS, ledgers });
  } finally {
    closeClient(admin);
  }
}

(phase === 'fill' ? fill() : remove()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
