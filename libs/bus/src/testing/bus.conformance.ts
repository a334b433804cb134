import { LedgerlineError } from '@ledgerline/errors';
import { uniqueNamespace } from '@ledgerline/testing';
import type { Bus, BusMessage, BusSubscription } from '../bus.js';

/** How the suite gets buses: `subscriber` may be the same bus as `publisher` (in process) or another connection. */
export interface BusBackend {
  name: string;
  pair(): Promise<{ publisher: Bus; subscriber: Bus }>;
}

const text = new TextEncoder();
const GUARD_MS = 5000;

/** Reads `count` messages, failing (not hanging) when they do not come within a generous guard time. */
export async function take(subscription: BusSubscription, count: number): Promise<BusMessage[]> {
  const iterator = subscription[Symbol.asyncIterator]();
  const messages: BusMessage[] = [];
  const deadline = Date.now() + GUARD_MS;
  while (messages.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), deadline - Date.now())),
    );
    const next = await Promise.race([iterator.next(), timeout]);
    clearTimeout(timer);
    if (next === 'timeout') throw new Error(`got ${messages.length} of ${count} messages on ${subscription.pattern}`);
    if (next.done === true) break;
    messages.push(next.value);
  }
  return messages;
}

function body(message: BusMessage): string {
  return new TextDecoder().decode(message.data);
}

/** The one suite every Bus backend passes. */
export function busConformance(backend: BusBackend): void {
  describe(`Bus conformance: ${backend.name}`, () => {
    const context = {} as Context;

    beforeEach(async () => {
      const { publisher, subscriber } = await backend.pair();
      Object.assign(context, { publisher, subscriber, root: uniqueNamespace('bus') });
    });

    afterEach(async () => {
      await context.publisher.close();
      if (context.subscriber !== context.publisher) await context.subscriber.close();
    });

    delivery(context);
    unsubscribing(context);
    overflow(context);
    limitsAndStats(context);
  });
}

interface Context {
  publisher: Bus;
  subscriber: Bus;
  root: string;
}

async function publishAll(publisher: Bus, subjects: string[]): Promise<void> {
  for (const subject of subjects) await publisher.publish(subject, text.encode(subject));
  await publisher.flush();
}

function delivery(context: Context): void {
  it('delivers a message to an exact subscription with its bytes intact', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.a.b`);
    await subscriber.flush();
    const data = Uint8Array.from([0, 1, 2, 255]);
    await publisher.publish(`${root}.a.b`, data);
    data[0] = 9;
    const [message] = await take(subscription, 1);
    expect(message?.subject).toBe(`${root}.a.b`);
    expect([...(message?.data ?? [])]).toEqual([0, 1, 2, 255]);
    subscription.unsubscribe();
  });

  it('matches * to exactly one token and > to one or more trailing tokens', async () => {
    const { publisher, subscriber, root } = context;
    const star = subscriber.subscribe(`${root}.*.x`);
    const rest = subscriber.subscribe(`${root}.a.>`);
    const marker = subscriber.subscribe(`${root}.end`);
    await subscriber.flush();
    await publishAll(publisher, [
      `${root}.a.x`,
      `${root}.a`,
      `${root}.b.c.x`,
      `${root}.a.y.z`,
      `${root}.b.x`,
      `${root}.end`,
    ]);
    await take(marker, 1);
    expect((await take(star, 2)).map(body)).toEqual([`${root}.a.x`, `${root}.b.x`]);
    expect((await take(rest, 2)).map(body)).toEqual([`${root}.a.x`, `${root}.a.y.z`]);
    for (const subscription of [star, rest, marker]) subscription.unsubscribe();
  });

  it('gives every matching subscription its own copy', async () => {
    const { publisher, subscriber, root } = context;
    const first = subscriber.subscribe(`${root}.fan`);
    const second = subscriber.subscribe(`${root}.>`);
    await subscriber.flush();
    await publishAll(publisher, [`${root}.fan`]);
    expect((await take(first, 1)).map(body)).toEqual([`${root}.fan`]);
    expect((await take(second, 1)).map(body)).toEqual([`${root}.fan`]);
    first.unsubscribe();
    second.unsubscribe();
  });

  it('keeps the order of one publisher', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.seq.*`);
    await subscriber.flush();
    const count = 500;
    for (let i = 0; i < count; i++) await publisher.publish(`${root}.seq.${i % 7}`, text.encode(String(i)));
    await publisher.flush();
    const received = (await take(subscription, count)).map((message) => Number(body(message)));
    expect(received).toEqual(Array.from({ length: count }, (_, i) => i));
    subscription.unsubscribe();
  });
}

function unsubscribing(context: Context): void {
  it('ends the iteration on unsubscribe and delivers nothing after it', async () => {
    const { publisher, subscriber, root } = context;
    const gone = subscriber.subscribe(`${root}.u`);
    const kept = subscriber.subscribe(`${root}.u`);
    await subscriber.flush();
    gone.unsubscribe();
    await publishAll(publisher, [`${root}.u`]);
    expect(await take(kept, 1)).toHaveLength(1);
    expect(await take(gone, 1)).toEqual([]);
    kept.unsubscribe();
  });

  it('unsubscribes when the consumer breaks out of for-await', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.brk`);
    await subscriber.flush();
    await publishAll(publisher, [`${root}.brk`, `${root}.brk`]);
    let seen = 0;
    for await (const _message of subscription) {
      seen++;
      break;
    }
    expect(seen).toBe(1);
    expect(await take(subscription, 1)).toEqual([]);
  });

  it('ends subscriptions on close and refuses publishes after it', async () => {
    const { subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.closing`);
    await subscriber.close();
    expect(await take(subscription, 1)).toEqual([]);
    await expect(subscriber.publish(`${root}.closing`, new Uint8Array(1))).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'BUS_CLOSED',
    });
  });
}

function overflow(context: Context): void {
  it('drops the oldest messages of a slow consumer and counts them', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.slow`, { bufferSize: 10, overflow: 'drop-oldest' });
    const marker = subscriber.subscribe(`${root}.slow`, { bufferSize: 100 });
    await subscriber.flush();
    for (let i = 0; i < 30; i++) await publisher.publish(`${root}.slow`, text.encode(String(i)));
    await publisher.flush();
    await take(marker, 30);
    expect(subscription.dropped).toBe(20);
    expect((await take(subscription, 10)).map(body)).toEqual(Array.from({ length: 10 }, (_, i) => String(20 + i)));
    expect(subscriber.stats().subscriberDropped).toBeGreaterThanOrEqual(20);
    subscription.unsubscribe();
    marker.unsubscribe();
  });

  it('drops the newest messages when asked to and counts them', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.new`, { bufferSize: 5, overflow: 'drop-newest' });
    const marker = subscriber.subscribe(`${root}.new`, { bufferSize: 100 });
    await subscriber.flush();
    for (let i = 0; i < 12; i++) await publisher.publish(`${root}.new`, text.encode(String(i)));
    await publisher.flush();
    await take(marker, 12);
    expect(subscription.dropped).toBe(7);
    expect((await take(subscription, 5)).map(body)).toEqual(['0', '1', '2', '3', '4']);
    subscription.unsubscribe();
    marker.unsubscribe();
  });
}

function limitsAndStats(context: Context): void {
  it('rejects bad subjects, bad patterns, bad options and oversize payloads', async () => {
    const { publisher, subscriber, root } = context;
    for (const subject of ['', 'a..b', 'a.*', 'a.>', 'has space', '.a', 'a.', 'ü']) {
      await expect(publisher.publish(subject, new Uint8Array(1))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    for (const pattern of ['', 'a.>.b', 'a..b', 'tab\tx']) {
      expect(() => subscriber.subscribe(pattern)).toThrow(LedgerlineError);
    }
    expect(() => subscriber.subscribe(`${root}.x`, { bufferSize: 0 })).toThrow(
      expect.objectContaining({ reason: 'BAD_BUFFER_SIZE' }),
    );
    await expect(publisher.publish(`${root}.big`, new Uint8Array(2 * 1024 * 1024))).rejects.toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      reason: 'MESSAGE_TOO_LARGE',
    });
  });

  it('counts what it published and delivered', async () => {
    const { publisher, subscriber, root } = context;
    const subscription = subscriber.subscribe(`${root}.count`);
    await subscriber.flush();
    const before = publisher.stats().published;
    await publishAll(publisher, [`${root}.count`, `${root}.count`]);
    await take(subscription, 2);
    expect(publisher.stats().published - before).toBe(2);
    expect(subscriber.stats().delivered).toBeGreaterThanOrEqual(2);
    expect(subscriber.stats().connected).toBe(true);
    subscription.unsubscribe();
  });
}
