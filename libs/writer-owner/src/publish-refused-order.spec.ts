import { create, fromBinary } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { PublishRequestSchema, PublishResponseSchema, type PublishRequest } from '@ledgerline/proto';
import { RpcReason, type CallContext } from '@ledgerline/rpc';
import { readWholeLog, testBackends } from '@ledgerline/managed-ledger/testing';
import { decodeMessageEntry } from '@ledgerline/message-format';
import { Registry } from 'prom-client';
import { writerMetrics } from './metrics.js';
import type { OwnedTopic } from './owned-topic.js';
import { publishStream } from './publish-stream.js';
import { WriterReason } from './reasons.js';
import { TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

const TOPIC = 'persistent://t/ns/order';

/**
 * A producer's entry refused before it reached the topic (its load failed
 * while the metadata service was away) must not be overtaken on the same
 * stream by the producer's next entry: stored first, the next one made the
 * refused one's resend count as a duplicate of something never stored, and
 * its acknowledgement was a loss.
 */
describe('a publish stream after it refused an entry its producer sends again', () => {
  async function run(sends: Array<[string, bigint]>, topicLoads: Array<'fails' | 'loads'>) {
    const topic = await openTestTopic(TOPIC, testBackends(), TEST_DEDUP_SETTINGS);
    const getTopic = async (): Promise<OwnedTopic> => {
      if (topicLoads.shift() === 'fails') {
        throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'the metadata service is away');
      }
      return topic;
    };
    async function* requests(): AsyncIterable<PublishRequest> {
      for (const [producerName, sequenceId] of sends) {
        yield create(PublishRequestSchema, {
          message: { topic: TOPIC, producerName, sequenceId, payload: new Uint8Array([1]) },
        });
      }
    }
    const outcomes: string[] = [];
    const stream = publishStream(requests(), { signal: new AbortController().signal } as CallContext, {
      getTopic,
      maxPendingBytes: 1 << 20,
      maxPendingMessages: 1_000,
      maxMessagesPerRequest: 1_000,
      metrics: writerMetrics(new Registry()),
      draining: new AbortController().signal,
    });
    for await (const response of stream) {
      const result = fromBinary(PublishResponseSchema, response.bytes).result;
      outcomes.push(result.case === 'receipt' ? 'stored' : (result.value?.reason ?? '?'));
    }
    const stored = (await readWholeLog(topic.ledger)).map((entry) => {
      const { header } = decodeMessageEntry(entry.payload);
      return `${header.producerName}:${header.sequenceId}`;
    });
    await topic.unload('test finished');
    return { stored, outcomes };
  }

  it('refuses the later entries of the producer until the refused one comes again, then takes them in order', async () => {
    const { stored, outcomes } = await run(
      [
        ['p', 0n],
        ['p', 1n],
        ['p', 0n],
        ['p', 1n],
      ],
      ['fails', 'loads'],
    );
    expect(outcomes).toEqual([RpcReason.TRANSPORT_UNAVAILABLE, WriterReason.SEQUENCE_GAP, 'stored', 'stored']);
    expect(stored).toEqual(['p:0', 'p:1']);
  });

  it('fences only that producer, and never a producer without deduplication', async () => {
    const { outcomes } = await run(
      [
        ['p', 0n],
        ['q', 5n],
        ['', 9n],
      ],
      ['fails', 'loads'],
    );
    expect(outcomes).toEqual([RpcReason.TRANSPORT_UNAVAILABLE, 'stored', 'stored']);
  });
});
