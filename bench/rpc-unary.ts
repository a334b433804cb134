// Unary gRPC calls over loopback through the protobuf-es adapter: calls per
// second and latency percentiles at a few concurrency levels, next to plain
// grpc-js with the same bytes and no adapter, so the adapter's cost is visible.
// Client and server share this process (and the machine's cores), so compare
// the rows of one run rather than absolute numbers across machines.
// Run: npx tsx bench/rpc-unary.ts [--full]   (60 000 calls by default, under a minute; --full runs 4x as many)
import {
  Client as GrpcClient,
  Metadata,
  Server,
  ServerCredentials,
  credentials,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { MetadataStoreService, ChangeKind } from '@ledgerline/proto';
import { bindInsecure, closeClient, createClient, createGrpcServer, registerService } from '@ledgerline/rpc';
import * as hdr from 'hdr-histogram-js';

const full = process.argv.includes('--full');
const CALLS_PER_ROW = full ? 40_000 : 10_000;
const WARMUP_CALLS = 1000;
const CONCURRENCY = [1, 16, 64];
const VALUE_BYTES = 1024;
const value = new Uint8Array(VALUE_BYTES).fill(7);

type Call = () => Promise<unknown>;

interface Row {
  client: string;
  concurrency: number;
  callsPerSecond: number;
  latencyUsP50: number;
  latencyUsP99: number;
  latencyUsMax: number;
}

/** Runs `total` calls with `concurrency` callers in flight, recording each call's latency. */
async function measure(name: string, call: Call, concurrency: number, total: number): Promise<Row> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      next++;
      const started = process.hrtime.bigint();
      await call();
      histogram.recordValue(Number((process.hrtime.bigint() - started) / 1000n));
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    client: name,
    concurrency,
    callsPerSecond: Math.round(total / seconds),
    latencyUsP50: histogram.getValueAtPercentile(50),
    latencyUsP99: histogram.getValueAtPercentile(99),
    latencyUsMax: histogram.maxValue,
  };
}

async function startAdapterServer(): Promise<{ server: Server; port: number }> {
  const server = createGrpcServer();
  registerService(server, MetadataStoreService, {
    get: async () => ({ node: { value, version: 1n } }),
    exists: async () => ({ exists: true }),
    put: async () => ({ version: 1n }),
    delete: async () => ({}),
    children: async () => ({ names: [] }),
    async *watch() {
      yield { path: '/', kind: ChangeKind.CREATED, version: 1n };
    },
  });
  return { server, port: await bindInsecure(server, '127.0.0.1', 0) };
}

/** The same call on plain grpc-js: bytes in, the same pre-encoded bytes out, no protobuf work at all. */
async function startRawServer(response: Buffer): Promise<{ server: Server; port: number }> {
  const server = new Server();
  const identity = (b: Buffer): Buffer => b;
  server.register(
    '/raw.Bench/Get',
    (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => callback(null, response),
    identity,
    identity,
    'unary',
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { server, port };
}

async function main(): Promise<void> {
  const adapter = await startAdapterServer();
  const typed = createClient(MetadataStoreService, `127.0.0.1:${adapter.port}`);
  const typedCall: Call = () => typed.get({ path: '/managed-ledgers/t/ns/persistent/topic' });
  const { toBinary, create } = await import('@bufbuild/protobuf');
  const { GetResponseSchema } = await import('@ledgerline/proto');
  const encoded = Buffer.from(toBinary(GetResponseSchema, create(GetResponseSchema, { node: { value, version: 1n } })));
  const raw = await startRawServer(encoded);
  const rawClient = new GrpcClient(`127.0.0.1:${raw.port}`, credentials.createInsecure());
  const request = Buffer.from('/managed-ledgers/t/ns/persistent/topic');
  const rawCall: Call = () =>
    new Promise((resolve, reject) =>
      rawClient.makeUnaryRequest(
        '/raw.Bench/Get',
        (b: Buffer) => b,
        (b: Buffer) => b,
        request,
        new Metadata(),
        {},
        (e, r) => (e ? reject(e) : resolve(r)),
      ),
    );

  const rows: Row[] = [];
  for (const [name, call] of [
    ['adapter', typedCall],
    ['grpc-js raw', rawCall],
  ] as const) {
    await measure(name, call, 16, WARMUP_CALLS);
    for (const concurrency of CONCURRENCY) rows.push(await measure(name, call, concurrency, CALLS_PER_ROW));
  }
  console.log(`unary calls over loopback, ${VALUE_BYTES}-byte response, ${CALLS_PER_ROW} calls per row`);
  console.table(rows);

  closeClient(typed);
  rawClient.close();
  adapter.server.forceShutdown();
  raw.server.forceShutdown();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
