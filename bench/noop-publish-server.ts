// A Publish stream that stores nothing: it answers every entry of every
// request with a receipt at once (coalesced requests too). bench/writer-owner-publish.ts runs it as its own process
// to measure the ceiling Node, grpc-js and protobuf-es put on one Publish
// stream on this machine, beside what the writer owner reaches.
// Run: npx tsx bench/noop-publish-server.ts <port>
import { TopicsService, type PublishMessage, type PublishRequest } from '@ledgerline/proto';
import { bindInsecure, createGrpcServer, registerService, type ServiceImpl } from '@ledgerline/rpc';

/** Entries one request may carry, announced as the writer owner does. */
const MAX_MESSAGES_PER_REQUEST = 1_000;

function receiptFor(message: PublishMessage | undefined, offset: bigint, count: bigint) {
  return {
    case: 'receipt' as const,
    value: {
      sequenceId: message?.sequenceId ?? 0n,
      position: { ledgerId: 1n, entryId: offset },
      firstOffset: offset,
      lastOffset: offset + count - 1n,
      publishTimeMs: BigInt(Date.now()),
    },
  };
}

async function* publish(requests: AsyncIterable<PublishRequest>) {
  let offset = 0n;
  for await (const request of requests) {
    const results = [request.message, ...request.more].map((message) => {
      const count = BigInt(Math.max(1, message?.messages.length ?? 0));
      const result = receiptFor(message, offset, count);
      offset += count;
      return result;
    });
    yield {
      result: results[0]!,
      more: results.slice(1).map((result) => ({ result })),
      maxMessagesPerRequest: MAX_MESSAGES_PER_REQUEST,
    };
  }
}

async function main(): Promise<void> {
  const server = createGrpcServer();
  // Only Publish is ever called; anything else is a mistake in the bench and fails loudly.
  const unimplemented = () => Promise.reject(new Error('the no-op server answers Publish only'));
  const impl = Object.fromEntries(TopicsService.methods.map((method) => [method.localName, unimplemented]));
  registerService(server, TopicsService, { ...impl, publish } as unknown as ServiceImpl<typeof TopicsService>);
  const port = await bindInsecure(server, '127.0.0.1', Number(process.argv[2] ?? 0));
  process.stdout.write(`listening ${port}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
