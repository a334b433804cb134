import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { Code, ConnectError, createClient as createConnectClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ConsoleReason } from '@ledgerline/console';
import {
  AdminService,
  AuthAction,
  ConsoleService,
  CursorsService,
  ErrorInfoSchema,
  OwnerRole,
  TopicsService,
} from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { createToken, SecurityReason } from '@ledgerline/security';
import { eventually } from '@ledgerline/testing';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone, tokenAuthArgv } from './testing/test-standalone.js';

const text = (value: string) => new TextEncoder().encode(value);

function consoleClient(port: number, token?: string): Client<typeof ConsoleService> {
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${port}`,
    httpVersion: '1.1',
    interceptors:
      token === undefined
        ? []
        : [
            (next) => (request) => {
              request.header.set('authorization', `Bearer ${token}`);
              return next(request);
            },
          ],
  });
  return createConnectClient(ConsoleService, transport);
}

/** The Connect error a call failed with, its code and the reason in its ErrorInfo detail. */
async function refusal(call: Promise<unknown>): Promise<{ code: Code; reason: string; message: string }> {
  try {
    await call;
  } catch (thrown) {
    const error = ConnectError.from(thrown);
    const info = error.findDetails(ErrorInfoSchema)[0];
    return { code: error.code, reason: info?.reason ?? '', message: error.rawMessage };
  }
  throw new Error('the call succeeded');
}

describe('the web console against standalone, without authentication', () => {
  let dir: string;
  let running: RunningStandalone;
  let web: Client<typeof ConsoleService>;
  let admin: ReturnType<typeof createClient<typeof AdminService>>;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-console-'));
    const webRoot = join(dir, 'web');
    mkdirSync(join(webRoot, 'assets'), { recursive: true });
    writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>Ledgerline</title>');
    writeFileSync(join(webRoot, 'assets', 'app-1234.js'), 'console.log("app")');
    running = await startTestStandalone(join(dir, 'data'), 'silent', ['--console-web-root', webRoot]);
    base = `http://127.0.0.1:${running.console!.port}`;
    web = consoleClient(running.console!.port);
    admin = createClient(AdminService, `127.0.0.1:${running.grpcPort}`);
    await admin.createTenant({ tenant: 'acme' });
  });

  afterAll(async () => {
    closeClient(admin);
    await running?.shutdown('test finished');
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells a browser that no token is needed, and what runs', async () => {
    const me = await web.whoAmI({});
    expect(me).toMatchObject({ authEnabled: false, authenticated: true, mode: 'standalone', collectorEnabled: true });
    expect(me.kafkaEnabled).toBe(running.kafka !== undefined);
  });

  it('serves the front-end: files, index.html for the app routes, and the API beside them', async () => {
    const page = await fetch(`${base}/topics/public/default`);
    expect([page.status, await page.text()]).toEqual([200, '<!doctype html><title>Ledgerline</title>']);
    const asset = await fetch(`${base}/assets/app-1234.js`);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${base}/..%2f..%2fetc/passwd`)).status).not.toBe(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    // An address with a trailing slash and a route: the browser asks for `//`, a path, not a host.
    for (const path of ['//', '//topics/x', '//evil.example/x']) {
      const slashes = await fetch(`${base}${path}`);
      expect([path, slashes.status, await slashes.text()]).toEqual([
        path,
        200,
        '<!doctype html><title>Ledgerline</title>',
      ]);
    }
  });

  it('shows the overview: the owners, the collector, the tenants', async () => {
    const overview = await web.getOverview({});
    expect(overview.owners.length).toBeGreaterThanOrEqual(2);
    expect(overview.services.map((service) => service.service)).toEqual(
      expect.arrayContaining(['metadata', 'writer-owner', 'readonly-owner', 'garbage-collector']),
    );
    expect(overview.tenants).toBeGreaterThanOrEqual(2n);
    expect(overview.sampledAtMs).toBeGreaterThan(0n);
  });

  it('lists tenants with their admin roles and creation time, and namespaces with their policies', async () => {
    await admin.createNamespace({ namespace: 'acme/orders', policies: { retentionTimeMinutes: 60n } });
    const before = BigInt(Date.now());
    await admin.createTenant({ tenant: 'initech', adminRoles: ['initech-admin', 'initech-ops'] });
    const tenants = await web.listTenantSummaries({});
    const initech = tenants.tenants.find((tenant) => tenant.name === 'initech')!;
    expect(initech.adminRoles).toEqual(['initech-admin', 'initech-ops']);
    expect(initech.createdAtMs).toBeGreaterThanOrEqual(before);
    const acme = tenants.tenants.find((tenant) => tenant.name === 'acme')!;
    expect(acme).toMatchObject({ adminRoles: [] });
    expect(acme.createdAtMs).toBeGreaterThan(0n);
    expect(acme.createdAtMs).toBeLessThanOrEqual(before);
    expect(acme.namespaces[0]).toMatchObject({ name: 'acme/orders', permissionsVisible: true });
    expect(acme.namespaces[0]!.policies?.retentionTimeMinutes).toBe(60n);
    const one = await web.getNamespaceSummary({ namespace: 'public/default' });
    expect(one.namespace?.policies?.allowAutoTopicCreation).toBe(true);
  });

  it('pages a namespace of many topics in buckets, and searches it by prefix', async () => {
    await admin.createNamespace({ namespace: 'acme/many', policies: { numberOfTopicBuckets: 32 } });
    const locals = Array.from(
      { length: 3_000 },
      (_, i) => `${['orders', 'payments', 'users'][i % 3]}-${String(i).padStart(5, '0')}`,
    );
    for (let start = 0; start < locals.length; start += 1_000) {
      await admin.createTopics({ topics: locals.slice(start, start + 1_000).map((local) => `acme/many/${local}`) });
    }
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await web.browseTopics({ namespace: 'acme/many', prefix: 'payments-', pageSize: 300, pageToken });
      expect(page.topics.length).toBeLessThanOrEqual(300);
      expect(page.namespaceTopicCount).toBe(3_000n);
      expect(page.numberOfTopicBuckets).toBe(32);
      seen.push(...page.topics.map((topic) => topic.localName));
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    expect(seen).toEqual(locals.filter((local) => local.startsWith('payments-')).sort());
    const first = await web.browseTopics({ namespace: 'acme/many', pageSize: 10 });
    expect(first.topics.map((topic) => topic.localName)).toEqual([...locals].sort().slice(0, 10));
    expect(await refusal(web.browseTopics({ namespace: 'acme/many', pageSize: 5_000 }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: ConsoleReason.CONSOLE_LIMIT_EXCEEDED,
    });
    expect(await refusal(web.browseTopics({ namespace: 'acme/nope' }))).toMatchObject({ code: Code.NotFound });
  });

  it('produces messages and browses them by offset and by time, with keys, properties and positions', async () => {
    const topic = 'persistent://acme/orders/browse';
    await admin.createTopic({ topic });
    const produced = [];
    for (let i = 0; i < 30; i++) {
      produced.push(
        await web.produceMessage({ topic, key: `k${i}`, properties: { n: String(i) }, payload: text(`{"n":${i}}`) }),
      );
    }
    expect(produced.map((receipt) => receipt.offset)).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i)));
    const page = await web.browseMessages({ topic, start: { case: 'offset', value: 10n }, maxMessages: 5 });
    expect(page.messages.map((message) => [message.offset, message.key, message.properties['n']])).toEqual(
      [10, 11, 12, 13, 14].map((n) => [BigInt(n), `k${n}`, String(n)]),
    );
    expect(Buffer.from(page.messages[0]!.payload).toString()).toBe('{"n":10}');
    expect(page.messages[0]!.position?.ledgerId).toBe(produced[10]!.position?.ledgerId);
    expect(page).toMatchObject({ startOffset: 10n, nextOffset: 15n, earliestOffset: 0n, latestOffset: 30n });
    // A time search is by broker time (when the owner stored the entry), as Kafka's ListOffsets is.
    const stored20 = (await web.browseMessages({ topic, start: { case: 'offset', value: 20n }, maxMessages: 1 }))
      .messages[0]!.brokerTimestampMs;
    const byTime = await web.browseMessages({
      topic,
      start: { case: 'timestampMs', value: stored20 },
      maxMessages: 100,
    });
    expect(byTime.messages[0]!.offset).toBeLessThanOrEqual(20n);
    expect(byTime.messages.at(-1)!.offset).toBe(29n);
    const cut = await web.browseMessages({
      topic,
      start: { case: 'offset', value: 0n },
      maxMessages: 1,
      maxPayloadBytes: 3,
    });
    expect(cut.messages[0]).toMatchObject({ payloadTruncated: true, payloadSizeBytes: 7n });
    expect(cut.messages[0]!.payload.length).toBe(3);
    // Bad input: answered with a code and a reason, never a crash.
    expect(await refusal(web.browseMessages({ topic, start: { case: 'offset', value: -1n } }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: ConsoleReason.CONSOLE_BAD_START,
    });
    expect(await refusal(web.browseMessages({ topic, start: { case: 'offset', value: 31n } }))).toMatchObject({
      code: Code.OutOfRange,
      reason: ConsoleReason.CONSOLE_OFFSET_PAST_END,
    });
    expect(
      await refusal(web.browseMessages({ topic, start: { case: 'offset', value: 0n }, maxMessages: 501 })),
    ).toMatchObject({
      code: Code.InvalidArgument,
    });
    expect(
      await refusal(web.browseMessages({ topic: 'acme/orders/missing', start: { case: 'offset', value: 0n } })),
    ).toMatchObject({
      code: Code.NotFound,
    });
    expect(
      await refusal(web.browseMessages({ topic: 'not a // topic', start: { case: 'offset', value: 0n } })),
    ).toMatchObject({
      code: Code.InvalidArgument,
    });
  });

  it('counts the bytes of the loaded topics as storage used on the overview', async () => {
    const topic = 'persistent://acme/orders/stored';
    await admin.createTopic({ topic });
    for (let i = 0; i < 10; i++) await web.produceMessage({ topic, payload: text('x'.repeat(1_000)) });
    // The writer owner reports its topics' bytes with each keep-alive (a third of its lease TTL apart).
    let overview = await web.getOverview({});
    await eventually(
      async () => {
        overview = await web.getOverview({});
        return overview.storageUsedBytes >= 10_000n;
      },
      { attempts: 150, intervalMs: 200, description: "a keep-alive to report the topic's bytes" },
    );
    expect(overview.storageExact).toBe(false);
    const writers = overview.owners.filter((owner) => owner.role === OwnerRole.WRITER);
    expect(overview.storageUsedBytes).toBe(writers.reduce((sum, owner) => sum + (owner.load?.storageBytes ?? 0n), 0n));
  });

  it('shows a topic with its partitions, ledgers, offsets and subscriptions', async () => {
    const topic = 'persistent://acme/orders/split';
    await admin.createTopic({ topic, partitions: 3 });
    await web.produceMessage({ topic, key: 'a', payload: text('x') });
    const summary = await web.getTopicSummary({ topic });
    expect(summary.partitions).toBe(3);
    expect(summary.partitionSummaries.map((partition) => partition.index)).toEqual([0, 1, 2]);
    const written = summary.partitionSummaries.filter((partition) => partition.latestOffset === 1n);
    expect(written).toHaveLength(1);
    expect(written[0]!.ledgers.at(-1)).toMatchObject({ open: true });
    expect(written[0]!.ownerAddress).not.toBe('');
    expect(await refusal(web.browseMessages({ topic, start: { case: 'offset', value: 0n } }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: ConsoleReason.CONSOLE_PARTITION_REQUIRED,
    });
    expect(await refusal(web.getTopicSummary({ topic: 'acme/orders/none' }))).toMatchObject({ code: Code.NotFound });
  });

  it('lists a partitioned topic as one row with its partition count, and its page lists its partitions', async () => {
    await admin.createNamespace({ namespace: 'acme/parts', policies: { numberOfTopicBuckets: 4 } });
    await admin.createTopic({ topic: 'acme/parts/events', partitions: 3 });
    // Plain topics around it, one of them sorting between its partitions (not a partition name: "1x").
    for (const local of ['alpha', 'events-partition-1x', 'zeta'])
      await admin.createTopic({ topic: `acme/parts/${local}` });
    const rowsOf = async (prefix: string, pageSize: number) => {
      const rows = [];
      let pageToken = '';
      do {
        const page = await web.browseTopics({ namespace: 'acme/parts', prefix, pageSize, pageToken });
        expect(page.topics.length).toBeLessThanOrEqual(pageSize);
        expect(page.namespaceTopicCount).toBe(6n);
        rows.push(...page.topics.map((row) => [row.localName, row.partitions, row.partitionedTopic]));
        pageToken = page.nextPageToken;
      } while (pageToken !== '');
      return rows;
    };
    const whole = [
      ['alpha', 0, ''],
      ['events', 3, ''],
      ['events-partition-1x', 0, ''],
      ['zeta', 0, ''],
    ];
    // Pages of one and two rows: the partitions after the first fall on later pages and are left out there too.
    for (const pageSize of [1, 2, 100]) expect(await rowsOf('', pageSize)).toEqual(whole);
    expect(await rowsOf('ev', 100)).toEqual(whole.slice(1, 3));
    // A prefix past the topic's name lists the partitions it matches, each marked with its topic.
    const events = 'persistent://acme/parts/events';
    expect(await rowsOf('events-partition-', 100)).toEqual([
      ['events-partition-0', 0, events],
      ['events-partition-1', 0, events],
      ['events-partition-1x', 0, ''],
      ['events-partition-2', 0, events],
    ]);

    const topics = createClient(TopicsService, `127.0.0.1:${running.grpcPort}`);
    const cursors = createClient(CursorsService, `127.0.0.1:${running.grpcPort}`);
    try {
      const first = `${events}-partition-1`;
      await cursors.createCursor({ topic: first, subscription: 'audit', start: { case: 'offset', value: 0n } });
      for (let i = 0; i < 4; i++) await topics.publishOne({ message: { topic: first, payload: text(`m${i}`) } });
      const summary = await web.getTopicSummary({ topic: events });
      expect(summary).toMatchObject({ topic: events, partitions: 3, partitionedTopic: '' });
      expect(
        summary.partitionSummaries.map((partition) => [partition.topic, partition.index, partition.latestOffset]),
      ).toEqual([
        [`${events}-partition-0`, 0, 0n],
        [first, 1, 4n],
        [`${events}-partition-2`, 2, 0n],
      ]);
      expect(summary.partitionSummaries[1]).toMatchObject({ backlogMessages: 4n, errorReason: '' });
      for (const partition of summary.partitionSummaries) expect(partition.ownerAddress).not.toBe('');
      // One partition's own page: its stats, and the topic it belongs to.
      const one = await web.getTopicSummary({ topic: first });
      expect(one).toMatchObject({ topic: first, partitions: 0, partitionedTopic: events });
      expect(one.partitionSummaries).toHaveLength(1);
      expect(one.partitionSummaries[0]).toMatchObject({ index: 1, latestOffset: 4n, backlogMessages: 4n });
      expect(one.partitionSummaries[0]!.subscriptions.map((subscription) => subscription.name)).toEqual(['audit']);
    } finally {
      closeClient(topics);
      closeClient(cursors);
    }
    expect(await refusal(web.browseTopics({ namespace: 'acme/parts', prefix: 'x'.repeat(10_000) }))).toMatchObject({
      code: Code.InvalidArgument,
    });
  });

  it('draws a subscription with a thousand ack holes as a bounded map, with exact ranges paged', async () => {
    const topic = 'persistent://acme/orders/holes';
    await admin.createTopic({ topic });
    const address = `127.0.0.1:${running.grpcPort}`;
    const topics = createClient(TopicsService, address);
    const cursors = createClient(CursorsService, address);
    try {
      const entries = 2_000;
      const stream = topics.publish(
        (async function* () {
          for (let i = 0; i < entries; i++) yield { message: { topic, payload: text(String(i)) } };
        })(),
      );
      let ledgerId = 0n;
      for await (const answer of stream) {
        if (answer.result.case === 'receipt') ledgerId = answer.result.value.position!.ledgerId;
      }
      const created = await cursors.createCursor({
        topic,
        subscription: 'audit',
        start: { case: 'offset', value: 0n },
      });
      // Every other entry acknowledged: 1,000 ranges, 1,000 holes.
      const ackedRanges = Array.from({ length: entries / 2 }, (_, i) => ({
        ledgerId,
        firstEntryId: BigInt(2 * i + 1),
        lastEntryId: BigInt(2 * i + 1),
      }));
      await cursors.updateCursor({
        topic,
        subscription: 'audit',
        update: { case: 'delta', value: { ackedRanges, resetEpoch: created.cursor!.resetEpoch } },
      });
      const summary = await web.getSubscriptionSummary({
        topic,
        subscription: 'audit',
        cells: 50,
        rangesPageSize: 500,
      });
      expect(summary.ackMap!.cells).toHaveLength(50);
      expect(summary.ackMap!.ackedRanges).toBe(1_000n);
      expect(summary.ackMap!.ackedEntries).toBe(1_000n);
      expect(summary.ackMap!.spanEntries).toBe(BigInt(entries));
      expect(summary.ranges).toHaveLength(500);
      let count = summary.ranges.length;
      let pageToken = summary.rangesNextPageToken;
      while (pageToken !== '') {
        const page = await web.listAckRanges({ topic, subscription: 'audit', pageSize: 1_000, pageToken });
        count += page.ranges.length;
        pageToken = page.nextPageToken;
      }
      expect(count).toBe(1_000);
      const jumped = await web.listAckRanges({
        topic,
        subscription: 'audit',
        from: { ledgerId, entryId: 1_500n },
        pageSize: 1,
      });
      expect(jumped.ranges[0]!.first!.entryId).toBe(1_501n);
      expect(await refusal(web.getSubscriptionSummary({ topic, subscription: 'nobody' }))).toMatchObject({
        code: Code.NotFound,
        reason: ConsoleReason.CONSOLE_SUBSCRIPTION_NOT_FOUND,
      });
      expect(await refusal(web.getSubscriptionSummary({ topic, subscription: 'audit', cells: 100_000 }))).toMatchObject(
        {
          code: Code.InvalidArgument,
        },
      );
      expect(await refusal(web.listAckRanges({ topic, subscription: 'audit', pageToken: 'forged' }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: ConsoleReason.CONSOLE_BAD_PAGE_TOKEN,
      });
    } finally {
      closeClient(topics);
      closeClient(cursors);
    }
    // Publishing 2,000 entries one by one takes seconds on a loaded machine; the bound is generous.
  }, 120_000);

  it('shows the collector and the Kafka groups', async () => {
    const collector = await web.getCollectorSummary({});
    expect(collector).toMatchObject({ reachable: true });
    expect(collector.gcIntervalMs).toBeGreaterThan(0n);
    const kafka = await web.listKafkaGroups({});
    expect(kafka).toMatchObject({ reachable: running.kafka !== undefined, groups: [] });
  });
});

const SECRET = 'a-development-secret-of-at-least-32-bytes';

describe('the web console against standalone with token authentication', () => {
  let dir: string;
  let running: RunningStandalone;
  let port: number;
  let ops: string;
  let producer: string;
  let consumer: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-console-auth-'));
    running = await startTestStandalone(join(dir, 'data'), 'silent', [
      ...tokenAuthArgv(SECRET, 100),
      '--console-web-root',
      join(dir, 'no-web'),
    ]);
    port = running.console!.port;
    ops = await createToken({ subject: 'ops', secret: SECRET });
    producer = await createToken({ subject: 'writer-app', secret: SECRET });
    consumer = await createToken({ subject: 'reader-app', secret: SECRET });
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${ops}`);
    const admin = createClient(AdminService, `127.0.0.1:${running.grpcPort}`);
    const options = { metadata };
    await admin.createTenant({ tenant: 'acme' }, options);
    await admin.createNamespace({ namespace: 'acme/app' }, options);
    await admin.createTopic({ topic: 'acme/app/events' }, options);
    await admin.grantPermission({ namespace: 'acme/app', role: 'writer-app', actions: [AuthAction.PRODUCE] }, options);
    await admin.grantPermission({ namespace: 'acme/app', role: 'reader-app', actions: [AuthAction.CONSUME] }, options);
    closeClient(admin);
  });

  afterAll(async () => {
    await running?.shutdown('test finished');
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for a token, and refuses every page without one', async () => {
    const anonymous = consoleClient(port);
    expect(await anonymous.whoAmI({})).toMatchObject({ authEnabled: true, authenticated: false });
    for (const call of [
      anonymous.getOverview({}),
      anonymous.browseTopics({ namespace: 'acme/app' }),
      anonymous.getCollectorSummary({}),
      anonymous.browseMessages({ topic: 'acme/app/events', start: { case: 'offset', value: 0n } }),
    ]) {
      expect(await refusal(call)).toMatchObject({ code: Code.Unauthenticated, reason: SecurityReason.TOKEN_MISSING });
    }
    expect((await refusal(consoleClient(port, 'not-a-token').whoAmI({}))).code).toBe(Code.Unauthenticated);
  });

  it('answers a super-user everything, with the services checking the forwarded token', async () => {
    const super_ = consoleClient(port, ops);
    expect(await super_.whoAmI({})).toMatchObject({ authenticated: true, role: 'ops', superUser: true });
    expect((await super_.getOverview({})).owners.length).toBeGreaterThan(0);
    expect((await super_.getCollectorSummary({})).reachable).toBe(true);
    expect((await super_.browseTopics({ namespace: 'acme/app' })).topics.map((topic) => topic.localName)).toEqual([
      'events',
    ]);
  });

  it('lets a producer produce but not read payloads, and a consumer read them, as the services decide', async () => {
    const writer = consoleClient(port, producer);
    const reader = consoleClient(port, consumer);
    const topic = 'acme/app/events';
    expect((await writer.produceMessage({ topic, payload: text('secret') })).offset).toBe(0n);
    expect(await refusal(writer.browseMessages({ topic, start: { case: 'offset', value: 0n } }))).toMatchObject({
      code: Code.PermissionDenied,
    });
    const read = await reader.browseMessages({ topic, start: { case: 'offset', value: 0n } });
    expect(Buffer.from(read.messages[0]!.payload).toString()).toBe('secret');
    expect((await refusal(reader.produceMessage({ topic, payload: text('x') }))).code).toBe(Code.PermissionDenied);
    // Internal APIs and super-user listings stay a super-user's.
    expect((await refusal(reader.getOverview({}))).code).toBe(Code.PermissionDenied);
    expect(await refusal(reader.getCollectorSummary({}))).toMatchObject({
      code: Code.PermissionDenied,
      reason: SecurityReason.SERVICE_NOT_ALLOWED,
    });
    expect((await refusal(reader.getSubscriptionSummary({ topic, subscription: 's' }))).code).toBe(
      Code.PermissionDenied,
    );
  });

  it('says how to build the front-end instead of a blank page', async () => {
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('not built');
  });
});
