import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { Client as GrpcClient, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { AdminService, LookupService, MetadataStoreService, OwnerRole } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { errorFromServiceError, methodPath } from '@ledgerline/rpc';
import fc from 'fast-check';
import { sleep } from './sleep.js';
import { chaosString, requestArbitraries, type FuzzSeeds } from './testing/fuzz-requests.js';
import { encodePageToken } from './listing/page-token.js';
import {
  connectClients,
  expectWellRefused,
  healthChecker,
  startStandaloneService,
  type ServiceClients,
  type StandaloneService,
} from './testing/service-fixtures.js';

const SERVICES = [AdminService, LookupService, MetadataStoreService] as const;

const RUNS_PER_METHOD = 30;
/** Reasons of failures that are the service's fault, not the input's. */
const INTERNAL_REASONS = new Set(['INTERNAL_ERROR', 'CORRUPT_METADATA', 'STORE_PAGING_STUCK']);
const GARBAGE_RUNS_PER_METHOD = 15;

/** Batch results carry a reason per item; none may be an internal failure. */
function expectNoInternalResults(response: unknown): void {
  const results = (response as { results?: { topic: string; errorReason: string; errorMessage: string }[] })?.results;
  for (const result of results ?? []) {
    if (INTERNAL_REASONS.has(result.errorReason)) {
      throw new Error(`${result.topic.slice(0, 80)} failed with ${result.errorReason}: ${result.errorMessage}`);
    }
  }
}

function clientFor(clients: ServiceClients, service: DescService): Record<string, unknown> {
  if (service === AdminService) return clients.admin;
  if (service === LookupService) return clients.lookup;
  return clients.store;
}

/**
 * Starts a server stream and listens until the server has had time to refuse
 * it (a health round trip plus a pause), then cancels it; returns the failure,
 * if any, other than the cancellation.
 */
async function openStreamBriefly(
  start: (signal: AbortSignal) => AsyncIterable<unknown>,
  health: () => Promise<unknown>,
): Promise<unknown> {
  const controller = new AbortController();
  let failure: unknown;
  const reading = (async () => {
    try {
      for await (const _change of start(controller.signal)) {
        // A valid prefix may stream changes; only refusals matter here.
      }
    } catch (error) {
      if (!controller.signal.aborted) failure = error;
    }
  })();
  await health();
  await sleep(20);
  controller.abort();
  await reading;
  return failure;
}

async function seed(clients: ServiceClients): Promise<FuzzSeeds> {
  const { admin, lookup } = clients;
  await admin.createTenant({ tenant: 'fz' });
  await admin.createNamespace({ namespace: 'fz/ns', policies: { numberOfTopicBuckets: 4, ownerGroup: 'writers' } });
  await admin.createTopic({ topic: 'persistent://fz/ns/t' });
  await admin.createTopic({ topic: 'persistent://fz/ns/p', partitions: 2 });
  await admin.createNamespace({ namespace: 'fz/rd', policies: { ownerGroup: 'readers', writerNamespace: 'fz/ns' } });
  await admin.createNamespace({
    namespace: 'fz/auto',
    policies: { ownerGroup: 'writers', maxTopics: 8, allowAutoTopicCreation: true },
  });
  const registered = await lookup.registerOwner({
    owner: { instanceId: 'w-seed', role: OwnerRole.WRITER, group: 'writers', advertisedAddress: '127.0.0.1:6650' },
    sessionTtlMs: 300_000n,
  });
  return {
    tenant: 'fz',
    namespace: 'fz/ns',
    readerNamespace: 'fz/rd',
    autoNamespace: 'fz/auto',
    topic: 'persistent://fz/ns/t',
    partitionedTopic: 'persistent://fz/ns/p',
    ownerGroup: 'writers',
    readerGroup: 'readers',
    sessionId: registered.sessionId,
  };
}

function rawUnary(client: GrpcClient, method: DescMethod, bytes: Buffer): Promise<ServiceError | undefined> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      methodPath(method),
      (value: Buffer) => value,
      (value: Buffer) => value,
      bytes,
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (error) => resolve(error ?? undefined),
    );
  });
}

function rawStream(client: GrpcClient, method: DescMethod, bytes: Buffer, signal: AbortSignal) {
  const call = client.makeServerStreamRequest(
    methodPath(method),
    (value: Buffer) => value,
    (value: Buffer) => value,
    bytes,
  );
  signal.addEventListener('abort', () => call.cancel(), { once: true });
  return call as AsyncIterable<unknown>;
}

describe('the metadata service under generated bad input (standalone)', () => {
  let service: StandaloneService;
  let clients: ServiceClients;
  let health: ReturnType<typeof healthChecker>;
  let raw: GrpcClient;
  let arbitraries: ReturnType<typeof requestArbitraries>;

  beforeAll(async () => {
    service = await startStandaloneService();
    clients = connectClients(service.address);
    health = healthChecker(service.address);
    raw = new GrpcClient(service.address, credentials.createInsecure(), {
      'grpc.max_send_message_length': 16 * 1024 * 1024,
    });
    arbitraries = requestArbitraries(await seed(clients));
  });
  afterAll(async () => {
    raw.close();
    health.close();
    clients.close();
    await service.close();
  });

  async function expectServing(): Promise<void> {
    expect(await health.check()).toBe('SERVING');
  }

  it('has a request generator for every method of the three services', () => {
    for (const each of SERVICES) {
      const generators = arbitraries[each.name as keyof typeof arbitraries] as Record<string, unknown>;
      expect(Object.keys(generators).sort()).toEqual(each.methods.map((method) => method.localName).sort());
    }
  });

  for (const each of SERVICES) {
    for (const method of each.methods) {
      it(`answers generated ${each.name}.${method.name} requests with a success or a proper refusal`, async () => {
        const generator = (arbitraries[each.name as keyof typeof arbitraries] as Record<string, fc.Arbitrary<object>>)[
          method.localName
        ]!;
        const call = clientFor(clients, each)[method.localName] as (
          request: object,
          options?: { signal?: AbortSignal },
        ) => unknown;
        await fc.assert(
          fc.asyncProperty(generator, async (request) => {
            let response: unknown;
            const failure =
              method.methodKind === 'server_streaming'
                ? await openStreamBriefly(
                    (signal) => call(request, { signal }) as AsyncIterable<unknown>,
                    () => health.check(),
                  )
                : await (call(request) as Promise<unknown>).then(
                    (answer) => void (response = answer),
                    (error: unknown) => error,
                  );
            if (failure !== undefined) expectWellRefused(method.name, LedgerlineError.from(failure));
            expectNoInternalResults(response);
            await expectServing();
          }),
          { numRuns: RUNS_PER_METHOD },
        );
      });
    }
  }

  // One test per method, so each stays a few seconds of work on a busy machine, and a failure names its method.
  for (const each of SERVICES) {
    for (const method of each.methods) {
      it(`answers raw garbage bytes on ${each.name}.${method.name} with a success or a proper refusal`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (bytes) => {
            const payload = Buffer.from(bytes);
            const error =
              method.methodKind === 'server_streaming'
                ? ((await openStreamBriefly(
                    (signal) => rawStream(raw, method, payload, signal),
                    () => health.check(),
                  )) as ServiceError | undefined)
                : await rawUnary(raw, method, payload);
            if (error !== undefined) expectWellRefused(method.name, errorFromServiceError(error));
            await expectServing();
          }),
          { numRuns: GARBAGE_RUNS_PER_METHOD },
        );
      });
    }
  }

  it('refuses a request over the message size limit with RESOURCE_EXHAUSTED and keeps serving', async () => {
    const oversize = Buffer.alloc(5 * 1024 * 1024, 0x41);
    for (const method of [AdminService.methods[0]!, LookupService.methods[0]!, MetadataStoreService.methods[2]!]) {
      const error = await rawUnary(raw, method, oversize);
      // grpc-js refuses it before any handler runs, so this status carries no ErrorInfo trailer.
      expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
      await expectServing();
    }
  });

  it('answers listing tokens that pass the checksum but hold anything with a listing or a proper refusal', async () => {
    const head = fc.oneof(
      fc.constant({ kind: 'unknown' as const }),
      fc.constant({ kind: 'done' as const }),
      chaosString.map((name) => ({ kind: 'at' as const, name })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(chaosString, { nil: undefined }),
        fc.array(head, { maxLength: 6 }),
        async (last, heads) => {
          // The seeded namespace has 4 buckets; other head counts must be refused, not trusted.
          const pageToken = encodePageToken('fz/ns', { last, heads });
          await clients.admin.listTopics({ namespace: 'fz/ns', pageToken }).catch((error: unknown) => {
            expectWellRefused('ListTopics', LedgerlineError.from(error));
          });
          await expectServing();
        },
      ),
      { numRuns: 60 },
    );
  });
});
