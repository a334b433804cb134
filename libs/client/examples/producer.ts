// Sends ten messages to a topic and prints where each was stored.
//
//   npm start                                     # in another terminal
//   npx ledgerline tenants create acme
//   npx ledgerline namespaces create acme/demo
//   npx ledgerline topics create acme/demo/greetings
//   npx tsx libs/client/examples/producer.ts
// eslint-disable-next-line @nx/enforce-module-boundaries -- an example imports the package as an application does
import { createClient, messageIdToString } from '@ledgerline/client';

async function main(): Promise<void> {
  const client = createClient({ serviceUrl: process.env['LEDGERLINE_URL'] ?? 'localhost:6650' });
  try {
    const producer = await client.producer({
      topic: 'acme/demo/greetings',
      batching: { maxMessages: 100, maxDelayMs: 5 },
    });
    const receipts = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        producer.send(`hello ${index}`, { key: `user-${index % 3}`, properties: { source: 'example' } }),
      ),
    );
    for (const receipt of receipts)
      console.log(`stored at offset ${receipt.offset} (${messageIdToString(receipt.messageId)})`);
    await producer.close();
  } finally {
    await client.close();
  }
}

void main().catch((error: unknown) => {
  console.error(String(error));
  process.exitCode = 1;
});
