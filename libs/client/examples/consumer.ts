// Receives messages of a subscription and acknowledges each; Ctrl-C stops it.
//
//   npx tsx libs/client/examples/consumer.ts      # after producer.ts set the topic up
// eslint-disable-next-line @nx/enforce-module-boundaries -- an example imports the package as an application does
import { createClient } from '@ledgerline/client';

async function main(): Promise<void> {
  const client = createClient({ serviceUrl: process.env['LEDGERLINE_URL'] ?? 'localhost:6650' });
  const consumer = await client.subscribe({
    topic: 'acme/demo/greetings',
    subscription: 'example',
    type: 'Shared',
    initialPosition: 'earliest',
    ackTimeoutMs: 30_000,
    deadLetter: { maxRedeliveries: 5 },
  });
  process.once('SIGINT', () => {
    consumer.close().catch((error: unknown) => console.error(String(error)));
  });
  try {
    for await (const message of consumer) {
      console.log(`${message.offset} ${message.key ?? '-'} ${Buffer.from(message.payload).toString()}`);
      // Resolves at once; close() (Ctrl-C) persists the acks made so far before it closes.
      await consumer.ack(message);
    }
  } finally {
    await client.close();
  }
}

void main().catch((error: unknown) => {
  console.error(String(error));
  process.exitCode = 1;
});
