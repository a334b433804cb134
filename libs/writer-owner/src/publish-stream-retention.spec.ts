import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { create, fromBinary } from '@bufbuild/protobuf';
import { PublishRequestSchema, PublishResponseSchema, type PublishRequest } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { testBackends } from '@ledgerline/managed-ledger/testing';
import { Registry } from 'prom-client';
import { writerMetrics } from './metrics.js';
import { publishStream } from './publish-stream.js';
import { TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

const TOPIC = 'persistent://t/ns/retention';
const REQUESTS = 20;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * A producer keeps its Publish stream open for as long as it runs. The stream
 * read each request in a race against the owner's drain, a promise that
 * settles only when the owner drains: every race left a reaction on it that
 * held the request read (its payload and the gRPC frame under it) until then,
 * so a long-lived stream kept every request it ever read, and the collector
 * marked and moved them all (the latency tail, issue 40 step 4.9).
 */
describe('a publish stream that stays open', () => {
  it('keeps none of the requests it has answered', async () => {
    const topic = await openTestTopic(TOPIC, testBackends(), TEST_DEDUP_SETTINGS);
    const sent: WeakRef<PublishRequest>[] = [];
    let answered = 0;
    const waiting: (() => void)[] = [];
    const answer = (): Promise<void> => new Promise<void>((resolve) => waiting.push(resolve));
    let stop: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    async function* requests(): AsyncIterable<PublishRequest> {
      for (let i = 0; i < REQUESTS; i++) {
        const request = create(PublishRequestSchema, {
          message: { topic: TOPIC, producerName: 'p', sequenceId: BigInt(i), payload: new Uint8Array(1024) },
        });
        sent.push(new WeakRef(request));
        yield request;
        // One request at a time: the next goes once this one is answered.
        while (answered <= i) await answer();
      }
      // The producer stays: the stream is open while the requests are looked for.
      await stopped;
    }
    const stream = publishStream(requests(), { signal: new AbortController().signal } as CallContext, {
      getTopic: () => Promise.resolve(topic),
      maxPendingBytes: 1 << 20,
      maxPendingMessages: 1_000,
      maxMessagesPerRequest: 1_000,
      metrics: writerMetrics(new Registry()),
      draining: new AbortController().signal,
    });
    const reading = (async () => {
      for await (const response of stream) {
        expect(fromBinary(PublishResponseSchema, response.bytes).result.case).toBe('receipt');
        answered++;
        for (const resolve of waiting.splice(0)) resolve();
      }
    })();
    while (answered < REQUESTS) await answer();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    // The stream may still hold the request it read last; none before it.
    expect(sent.filter((ref) => ref.deref() !== undefined).length).toBeLessThanOrEqual(1);
    stop!();
    await reading;
    await topic.unload('test finished');
  });
});
