import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdminService,
  InitialPosition,
  SubscriptionType,
  TopicsService,
  type ConsumeResponse,
} from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

describe('standalone: admin, publish and consume on one port', () => {
  let dir: string;
  let running: RunningStandalone;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-standalone-'));
    running = await startTestStandalone(dir);
  });
  afterAll(async () => {
    await running.shutdown('test finished');
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a topic, publishes and consumes it through the same address', async () => {
    const address = `127.0.0.1:${running.grpcPort}`;
    const admin = createClient(AdminService, address);
    const topics = createClient(TopicsService, address);
    await admin.createTenant({ tenant: 'acme' });
    await admin.createNamespace({ namespace: 'acme/orders' });
    await admin.createTopic({ topic: 'persistent://acme/orders/payments' });
    const topic = 'persistent://acme/orders/payments';
    const receipt = await topics.publishOne({
      message: { topic, producerName: 'p', sequenceId: 1n, payload: new TextEncoder().encode('hello'), key: 'k' },
    });
    expect(receipt.receipt!.firstOffset).toBe(0n);
    const controller = new AbortController();
    const requests = (async function* () {
      yield {
        command: {
          case: 'subscribe' as const,
          value: { topic, subscription: 's', type: SubscriptionType.SHARED, initialPosition: InitialPosition.EARLIEST },
        },
      };
      yield { command: { case: 'flow' as const, value: { permits: 10 } } };
      // The stream stays open until the test has what it waits for.
      await new Promise((resolve) => controller.signal.addEventListener('abort', resolve, { once: true }));
    })();
    const seen: ConsumeResponse[] = [];
    const stream = topics.consume(requests, { signal: controller.signal });
    for await (const response of stream) {
      seen.push(response);
      if (response.event.case === 'entry') break;
    }
    controller.abort();
    const entry = seen.find((r) => r.event.case === 'entry')!.event.value as {
      messages: { payload: Uint8Array; key?: string }[];
    };
    expect([Buffer.from(entry.messages[0]!.payload).toString(), entry.messages[0]!.key]).toEqual(['hello', 'k']);
    closeClient(admin);
    closeClient(topics);
  });
});
