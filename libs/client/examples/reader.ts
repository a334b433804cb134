// Reads a topic from an offset (or a time) without a subscription, up to its end when it started.
//
//   npx tsx libs/client/examples/reader.ts [offset]
// eslint-disable-next-line @nx/enforce-module-boundaries -- an example imports the package as an application does
import { createClient } from '@ledgerline/client';

async function main(): Promise<void> {
  const client = createClient({ serviceUrl: process.env['LEDGERLINE_URL'] ?? 'localhost:6650' });
  try {
    const offset = Number(process.argv[2] ?? '0');
    const reader = await client.reader({ topic: 'acme/demo/greetings', start: { offset } });
    // An hour ago, instead: client.reader({ topic, start: { timestamp: Date.now() - 3_600_000 } })
    const [partition] = await client.topicStats('acme/demo/greetings');
    const end = partition!.stats.nextOffset;
    if (BigInt(offset) < end) {
      for await (const message of reader) {
        const text = Buffer.from(message.payload).toString();
        console.log(`${message.offset} ${new Date(message.publishTime).toISOString()} ${text}`);
        if (message.offset + 1n >= end) break;
      }
    }
    await reader.close();
  } finally {
    await client.close();
  }
}

void main().catch((error: unknown) => {
  console.error(String(error));
  process.exitCode = 1;
});
