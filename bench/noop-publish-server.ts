// A Publish stream that stores nothing: it answers every request with a
// receipt at once. bench/writer-owner-publish.ts runs it as its own process
// to measure the ceiling Node, grpc-js and protobuf-es put on one Publish
// stream on this machine, beside what the writer owner reaches.
// Run: npx tsx bench/noop-publish-server.ts <port>
import { TopicsService, type PublishRequest } from '@ledgerline/proto';
import { bindInsecure, createGrpcServer, registerService, type ServiceImpl } from '@ledgerline/rpc';

async function* publish(requests: AsyncIterable<PublishRequest>) {
  let offset = 0n;
  for await (const request of requests) {
    const count = BigInt(Math.max(1, request.message?.messages.length ?? 0));
    yield {
      result: {
        case: 'receipt' as const,
        value: {
          sequenceId: request.message?.sequenceId ?? 0n,
          position: { ledgerId: 1n, entryId: offset },
          firstOffset: offset,
          lastOffset: offset + count - 1n,
          publishTimeMs: BigInt(Date.now()),
        },
      },
    };
    offset += count;
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
