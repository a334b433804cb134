import { Client as GrpcClient, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { codeName, LedgerlineError } from '@ledgerline/errors';
import { CursorsService, TopicsService } from '@ledgerline/proto';
import { methodPath } from '@ledgerline/rpc';
import fc from 'fast-check';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const RUNS_PER_METHOD = 25;
/** Codes that would mean the service, not the input, is at fault. */
const FAULT_CODES = new Set(['INTERNAL', 'UNKNOWN', 'DATA_LOSS']);

const int64 = fc.oneof(
  fc.constantFrom(0n, 1n, -1n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);
const int32 = fc.oneof(fc.constantFrom(0, 1, -1, 2 ** 31 - 1, -(2 ** 31)), fc.integer());
const chaos = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('', '/', '..', '\u0000', '\uD800', 'ledgerline.dedup', 'x'.repeat(5_000)),
);
const position = fc.record({ ledgerId: int64, entryId: int64 }, { requiredKeys: [] });

function arbitraries(topic: string) {
  const topicName = fc.oneof(fc.constant(topic), fc.constant('persistent://t/ns/missing'), chaos);
  const subscription = fc.oneof(fc.constant('sub'), chaos);
  const message = fc.record(
    {
      topic: topicName,
      payload: fc.uint8Array({ maxLength: 64 }),
      sequenceId: int64.map((v) => (v < 0n ? -v : v) % 2n ** 64n),
      producerName: fc.oneof(fc.constant('p'), chaos),
      key: chaos,
      properties: fc.dictionary(chaos, chaos, { maxKeys: 3 }),
      eventTimeMs: int64,
      messages: fc.array(
        fc.record({ payload: fc.uint8Array({ maxLength: 8 }), key: chaos, eventTimeMs: int64 }, { requiredKeys: [] }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: [] },
  );
  const target = fc.oneof(
    position.map((value) => ({ case: 'position' as const, value })),
    int64.map((value) => ({ case: 'offset' as const, value })),
    int64.map((value) => ({ case: 'timestampMs' as const, value })),
    fc.constant({ case: undefined }),
  );
  const range = fc.record({ ledgerId: int64, firstEntryId: int64, lastEntryId: int64 }, { requiredKeys: [] });
  return {
    topics: {
      publishOne: fc.record({ message }, { requiredKeys: [] }),
      seek: fc.record({ topic: topicName, subscription, target }, { requiredKeys: [] }),
      findPosition: fc.record({ topic: topicName, target }, { requiredKeys: [] }),
      fetchByOffset: fc.record(
        {
          topic: topicName,
          offset: int64,
          maxEntries: int32,
          maxBytes: int64,
          maxWaitMs: fc.constantFrom(0n, -1n, 10n),
        },
        { requiredKeys: [] },
      ),
      unsubscribe: fc.record({ topic: topicName, subscription }, { requiredKeys: [] }),
      getTopicStats: fc.record({ topic: topicName }, { requiredKeys: [] }),
    },
    cursors: {
      getCursor: fc.record({ topic: topicName, subscription }, { requiredKeys: [] }),
      createCursor: fc.record(
        {
          topic: topicName,
          subscription,
          start: target.map((t) => (t.case === 'timestampMs' ? { case: undefined } : t)),
        },
        { requiredKeys: [] },
      ),
      deleteCursor: fc.record(
        { topic: topicName, subscription: fc.oneof(fc.constant('other'), chaos) },
        { requiredKeys: [] },
      ),
      updateCursor: fc.record(
        {
          topic: topicName,
          subscription,
          update: fc.oneof(
            fc
              .record(
                { ackedRanges: fc.array(range, { maxLength: 3 }), markDelete: position, resetEpoch: int64 },
                { requiredKeys: [] },
              )
              .map((value) => ({ case: 'delta' as const, value })),
            fc
              .record({ position, expectedResetEpoch: int64 }, { requiredKeys: [] })
              .map((value) => ({ case: 'reset' as const, value })),
          ),
          properties: fc.dictionary(chaos, int64, { maxKeys: 2 }),
        },
        { requiredKeys: [] },
      ),
    },
    consume: fc.array(
      fc.oneof(
        fc
          .record(
            { topic: topicName, subscription, type: int32, initialPosition: int32, ackTimeoutMs: int64 },
            { requiredKeys: [] },
          )
          .map((value) => ({ command: { case: 'subscribe' as const, value } })),
        int32.map((permits) => ({ command: { case: 'flow' as const, value: { permits } } })),
        fc
          .array(position, { maxLength: 3 })
          .map((positions) => ({ command: { case: 'ack' as const, value: { positions } } })),
        fc
          .array(position, { maxLength: 3 })
          .map((positions) => ({ command: { case: 'nack' as const, value: { positions } } })),
        fc.constant({ command: { case: undefined } }),
      ),
      { maxLength: 5 },
    ),
  };
}

function expectWellRefused(thrown: unknown): void {
  const error = LedgerlineError.from(thrown);
  if (FAULT_CODES.has(error.code)) throw new Error(`${error.code} ${error.reason}: ${error.message}`);
}

describe('writer owner: fuzzed requests on every RPC', () => {
  let harness: WriterHarness;
  let topic: string;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
    topic = await harness.createTopic('fuzzed');
    await harness.topics.publishOne({ message: { topic, payload: new Uint8Array([1]) } });
    await harness.cursors.createCursor({ topic, subscription: 'sub' });
  });
  afterAll(async () => harness.close());

  async function stillServes(): Promise<void> {
    const { receipt } = await harness.topics.publishOne({ message: { topic, payload: new Uint8Array([2]) } });
    expect(receipt!.duplicate).toBe(false);
  }

  it('answers structured garbage on every unary method with a status, never a fault', async () => {
    const all = arbitraries(topic);
    for (const [client, methods] of [
      [harness.topics, all.topics],
      [harness.cursors, all.cursors],
    ] as const) {
      for (const [name, arbitrary] of Object.entries(methods)) {
        const call = (client as unknown as Record<string, (r: unknown, o: object) => Promise<unknown>>)[name]!;
        await fc.assert(
          fc.asyncProperty(arbitrary as fc.Arbitrary<object>, async (request) => {
            await call(request, { deadlineMs: 10_000 }).catch(expectWellRefused);
          }),
          { numRuns: RUNS_PER_METHOD },
        );
      }
    }
    await stillServes();
  });

  it('answers garbage on the Publish and Consume streams with statuses, never a fault', async () => {
    const all = arbitraries(topic);
    await fc.assert(
      fc.asyncProperty(fc.array(all.topics.publishOne, { maxLength: 5 }), async (requests) => {
        const stream = harness.topics.publish(
          (async function* () {
            yield* requests;
          })(),
          { deadlineMs: 10_000 },
        );
        try {
          for await (const response of stream) {
            if (response.result.case === 'failure')
              expect(FAULT_CODES.has(codeName(response.result.value.code))).toBe(false);
          }
        } catch (error) {
          expectWellRefused(error);
        }
      }),
      { numRuns: RUNS_PER_METHOD },
    );
    await fc.assert(
      fc.asyncProperty(all.consume, async (requests) => {
        const controller = new AbortController();
        const stream = harness.topics.consume(
          (async function* () {
            yield* requests as never[];
          })(),
          { signal: controller.signal, deadlineMs: 10_000 },
        );
        try {
          for await (const response of stream) {
            // A valid subscribe streams; only refusals matter here.
            if (response.event.case === 'subscribed') controller.abort();
          }
        } catch (error) {
          if (!controller.signal.aborted) expectWellRefused(error);
        }
      }),
      { numRuns: RUNS_PER_METHOD },
    );
    await stillServes();
  });

  it('answers bytes that are no protobuf at all with INVALID_ARGUMENT on every method', async () => {
    const client = new GrpcClient(harness.writerAddress, credentials.createInsecure());
    const methods = [...TopicsService.methods, ...CursorsService.methods].filter((m) => m.methodKind === 'unary');
    for (const method of methods) {
      const code = await new Promise<number>((resolve) => {
        client.makeUnaryRequest(
          methodPath(method),
          (bytes: Buffer) => bytes,
          (bytes: Buffer) => bytes,
          Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01]),
          new Metadata(),
          (error: ServiceError | null) => resolve(error?.code ?? 0),
        );
      });
      expect(code).toBe(3);
    }
    client.close();
    await stillServes();
  });
});
