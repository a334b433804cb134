// What security costs a unary call: plaintext, TLS, mutual TLS (an internal
// API called with a service certificate) and bearer-token authentication (a
// JWT verified on every call), each through the shared server set-up every
// service uses (serve()). Client and server share this process and the
// machine's cores, so compare the rows of one run, not absolute numbers.
// Run: npx tsx bench/security-overhead.ts [--full]   (20 000 calls per row by default; --full runs 4x as many)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { ChangeKind, MetadataStoreService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { createToken } from '@ledgerline/security';
import { createDevCertificates, writeDevCertificates } from '@ledgerline/security/dev-certificates';
import { createLogger, grpcService, serve, serviceConfigSchema } from '@ledgerline/service-kit';
import * as hdr from 'hdr-histogram-js';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';

const full = process.argv.includes('--full');
const CALLS_PER_ROW = full ? 80_000 : 20_000;
const WARMUP_CALLS = 1000;
const CONCURRENCY = 16;
const SECRET = 'a-benchmark-secret-of-at-least-32-bytes';
const value = new Uint8Array(256).fill(7);

const store = grpcService(MetadataStoreService, {
  get: () => ({ node: { value, version: 1n } }),
  exists: () => ({ exists: true }),
  put: () => ({ version: 1n }),
  delete: () => ({}),
  children: () => ({ names: [] }),
  async *watch(request) {
    yield { path: request.pathPrefix, kind: ChangeKind.CREATED, version: 0n };
  },
});

async function measure(call: () => Promise<unknown>): Promise<{ callsPerSecond: number; p50: number; p99: number }> {
  for (let i = 0; i < WARMUP_CALLS; i++) await call();
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < CALLS_PER_ROW) {
      next++;
      const started = process.hrtime.bigint();
      await call();
      histogram.recordValue(Number((process.hrtime.bigint() - started) / 1000n));
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    callsPerSecond: Math.round(CALLS_PER_ROW / seconds),
    p50: histogram.getValueAtPercentile(50),
    p99: histogram.getValueAtPercentile(99),
  };
}

async function row(name: string, settings: Record<string, unknown>, channel: ChannelCredentials, metadata?: Metadata) {
  const service = await serve({
    name: 'bench',
    config: serviceConfigSchema.parse({
      grpcHost: '127.0.0.1',
      grpcPort: 0,
      metricsHost: '127.0.0.1',
      metricsPort: 0,
      ...settings,
    }),
    services: [store],
    logger: createLogger('bench', { level: 'silent' }),
    signals: [],
  });
  const client = createClient(MetadataStoreService, `localhost:${service.grpcPort}`, {
    credentials: channel,
    ...(metadata === undefined ? {} : { defaultMetadata: metadata }),
  });
  try {
    const result = await measure(() => client.get({ path: '/bench' }));
    console.log(
      `${name.padEnd(34)} ${String(result.callsPerSecond).padStart(9)} ${String(result.p50).padStart(8)} ${String(result.p99).padStart(8)}`,
    );
  } finally {
    closeClient(client);
    await service.shutdown();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-bench-tls-'));
  try {
    const files = await writeDevCertificates(dir, await createDevCertificates({ names: ['metadata', 'writer-owner'] }));
    const ca = readFileSync(files.caCert);
    const owner = files.leaves['writer-owner']!;
    const tls = { tlsCert: files.leaves['metadata']!.cert, tlsKey: files.leaves['metadata']!.key };
    const bearer = new Metadata();
    bearer.set('authorization', `Bearer ${await createToken({ subject: 'ops', secret: SECRET, expiresIn: '1h' })}`);
    console.log(
      `unary Get over loopback, ${CONCURRENCY} in flight, ${CALLS_PER_ROW} calls per row, load ${loadavg()[0]!.toFixed(1)}`,
    );
    console.log(`${'set-up'.padEnd(34)} ${'calls/s'.padStart(9)} ${'p50 us'.padStart(8)} ${'p99 us'.padStart(8)}`);
    await row('plaintext, open', {}, credentials.createInsecure());
    await row('TLS', tls, credentials.createSsl(ca));
    await row(
      'mutual TLS, service certificate',
      { ...tls, tlsCa: files.caCert },
      credentials.createSsl(ca, readFileSync(owner.key), readFileSync(owner.cert)),
    );
    const auth = { authEnabled: true, authTokenSecret: SECRET, superUserRoles: 'ops' };
    await row('plaintext, HS256 token per call', auth, credentials.createInsecure(), bearer);
    await row('TLS, HS256 token per call', { ...tls, ...auth }, credentials.createSsl(ca), bearer);
    console.log(`load after: ${loadavg()[0]!.toFixed(1)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
