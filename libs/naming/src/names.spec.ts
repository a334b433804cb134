import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import {
  MAX_LOCAL_NAME_LENGTH,
  MAX_NAMESPACE_NAME_LENGTH,
  MAX_PARTITION_INDEX,
  MAX_TENANT_NAME_LENGTH,
} from './limits.js';
import { NamespaceName } from './namespace-name.js';
import { TopicName } from './topic-name.js';
import { expectNamingError } from './testing/naming-expectations.js';

const entityChar = fc.constantFrom(...'abcXYZ019_-=:.'.split(''));
const entity = fc.string({ unit: entityChar, minLength: 1, maxLength: 20 });
const localName = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter((value) => !value.includes('/') && value.length <= MAX_LOCAL_NAME_LENGTH);
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) });

describe('NamespaceName', () => {
  it('parses tenant/namespace', () => {
    const namespace = NamespaceName.parse('my-tenant/ns.1=a:b_c');
    expect(namespace.tenant).toBe('my-tenant');
    expect(namespace.namespace).toBe('ns.1=a:b_c');
    expect(namespace.toString()).toBe('my-tenant/ns.1=a:b_c');
    expect(JSON.stringify({ namespace })).toBe('{"namespace":"my-tenant/ns.1=a:b_c"}');
    expect(namespace.equals(NamespaceName.of('my-tenant', 'ns.1=a:b_c'))).toBe(true);
    expect(namespace.equals(NamespaceName.parse('my-tenant/other'))).toBe(false);
    expect(namespace.equals('my-tenant/ns.1=a:b_c')).toBe(false);
  });

  it.each([
    ['', 'INVALID_NAMESPACE_NAME'],
    ['tenant', 'INVALID_NAMESPACE_NAME'],
    ['t/c/ns', 'INVALID_NAMESPACE_NAME'],
    ['/ns', 'INVALID_TENANT_NAME'],
    ['t/', 'INVALID_NAMESPACE_NAME'],
    ['te nant/ns', 'INVALID_TENANT_NAME'],
    ['t/n$s', 'INVALID_NAMESPACE_NAME'],
    ['t\u00e9/ns', 'INVALID_TENANT_NAME'],
    [`${'t'.repeat(MAX_TENANT_NAME_LENGTH + 1)}/ns`, 'INVALID_TENANT_NAME'],
    [`t/${'n'.repeat(MAX_NAMESPACE_NAME_LENGTH + 1)}`, 'INVALID_NAMESPACE_NAME'],
  ])('rejects %j with %s', (name, reason) => {
    expectNamingError(() => NamespaceName.parse(name), reason);
    expect(NamespaceName.isValid(name)).toBe(false);
  });

  it('names the problem in the message', () => {
    const error = expectNamingError(() => NamespaceName.parse('te nant/ns'), 'INVALID_TENANT_NAME');
    expect(error.message).toContain('"te nant"');
    expect(error.message).toContain('may only contain');
  });

  it('round-trips through toString', () => {
    fc.assert(
      fc.property(entity, entity, (tenant, namespace) => {
        const parsed = NamespaceName.parse(`${tenant}/${namespace}`);
        expect(NamespaceName.parse(parsed.toString()).equals(parsed)).toBe(true);
        expect([parsed.tenant, parsed.namespace]).toEqual([tenant, namespace]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('TopicName.parse', () => {
  it('parses a full persistent name', () => {
    const topic = TopicName.parse('persistent://tenant/ns/my-topic');
    expect(topic.domain).toBe('persistent');
    expect(topic.tenant).toBe('tenant');
    expect(topic.namespace).toBe('ns');
    expect(topic.namespaceName.equals(NamespaceName.parse('tenant/ns'))).toBe(true);
    expect(topic.localName).toBe('my-topic');
    expect(topic.partitionIndex).toBe(-1);
    expect(topic.isPartitioned).toBe(false);
    expect(topic.isPersistent).toBe(true);
    expect(topic.partitionedTopicName).toBe('persistent://tenant/ns/my-topic');
    expect(topic.toString()).toBe('persistent://tenant/ns/my-topic');
    expect(`${topic}`).toBe('persistent://tenant/ns/my-topic');
  });

  it('parses a non-persistent name', () => {
    const topic = TopicName.parse('non-persistent://t/ns/x y');
    expect(topic.domain).toBe('non-persistent');
    expect(topic.isPersistent).toBe(false);
    expect(topic.encodedLocalName).toBe('x+y');
  });

  it('expands short names like Pulsar', () => {
    expect(TopicName.parse('x').toString()).toBe('persistent://public/default/x');
    expect(TopicName.parse('tenant/ns/x').toString()).toBe('persistent://tenant/ns/x');
    expect(TopicName.parse('x').equals(TopicName.parse('persistent://public/default/x'))).toBe(true);
  });

  it('keeps any character but / in a local name', () => {
    const topic = TopicName.parse('persistent://t/ns/a b$c%d:e?f#g\u00e9\u{1F600}');
    expect(topic.localName).toBe('a b$c%d:e?f#g\u00e9\u{1F600}');
  });

  it.each([
    ['', 'INVALID_TOPIC_NAME'],
    ['t/x', 'INVALID_TOPIC_NAME'],
    ['t/ns/x/y', 'INVALID_TOPIC_NAME'],
    ['persistent://t/ns/x/y', 'INVALID_TOPIC_NAME'],
    ['persistent://t/ns', 'INVALID_TOPIC_NAME'],
    ['persistent://t/ns/', 'INVALID_TOPIC_NAME'],
    ['persistent://', 'INVALID_TOPIC_NAME'],
    ['Persistent://t/ns/x', 'INVALID_TOPIC_NAME'],
    ['kafka://t/ns/x', 'INVALID_TOPIC_NAME'],
    ['://t/ns/x', 'INVALID_TOPIC_NAME'],
    ['persistent://t//x', 'INVALID_NAMESPACE_NAME'],
    ['persistent:///ns/x', 'INVALID_TENANT_NAME'],
    ['persistent://t t/ns/x', 'INVALID_TENANT_NAME'],
    ['persistent://t/n*s/x', 'INVALID_NAMESPACE_NAME'],
    ['t//ns/x', 'INVALID_TOPIC_NAME'],
    ['/x', 'INVALID_TOPIC_NAME'],
    ['persistent://t/ns/a\ud800', 'INVALID_TOPIC_NAME'],
    ['\udc00', 'INVALID_TOPIC_NAME'],
    [`persistent://t/ns/${'x'.repeat(MAX_LOCAL_NAME_LENGTH + 1)}`, 'INVALID_TOPIC_NAME'],
    ['x'.repeat(100_000), 'INVALID_TOPIC_NAME'],
  ])('rejects %j with %s', (name, reason) => {
    expectNamingError(() => TopicName.parse(name), reason);
    expect(TopicName.isValid(name)).toBe(false);
  });

  it('explains an unknown domain and a slash in the local name', () => {
    expect(expectNamingError(() => TopicName.parse('kafka://t/ns/x'), 'INVALID_TOPIC_NAME').message).toContain(
      'unknown topic domain "kafka"',
    );
    expect(expectNamingError(() => TopicName.parse('persistent://t/ns/a/b'), 'INVALID_TOPIC_NAME').message).toContain(
      'may not contain "/"',
    );
  });

  it('accepts a local name of exactly the maximum length', () => {
    const longest = 'x'.repeat(MAX_LOCAL_NAME_LENGTH);
    expect(TopicName.parse(`non-persistent://${'t'.repeat(255)}/${'n'.repeat(255)}/${longest}`).localName).toBe(
      longest,
    );
  });

  it('rejects values that are not strings', () => {
    for (const value of [undefined, null, 42, {}, ['x']]) {
      expectNamingError(() => TopicName.parse(value as unknown as string), 'INVALID_TOPIC_NAME');
    }
  });
});

describe('partitions', () => {
  it.each([
    ['x-partition-0', 0],
    ['x-partition-7', 7],
    ['x-partition-2147483647', MAX_PARTITION_INDEX],
    ['a-partition-1-partition-2', 2],
    ['x-partition-1x', -1],
    ['x-partition-', -1],
    ['x-partition-01', -1],
    ['x-partition--1', -1],
    ['x-partition-+1', -1],
    ['x-partition- 1', -1],
    ['x-partition-2147483648', -1],
    ['x-partition-99999999999', -1],
    ['x-partition-\u0663', -1],
    ['-partition-0', -1],
    ['plain', -1],
  ])('%j has partition index %d', (local, index) => {
    expect(TopicName.parse(`persistent://t/ns/${local}`).partitionIndex).toBe(index);
  });

  it('names partitions and their partitioned topic', () => {
    const base = TopicName.parse('persistent://t/ns/orders');
    const third = base.partition(3);
    expect(third.toString()).toBe('persistent://t/ns/orders-partition-3');
    expect(third.partitionIndex).toBe(3);
    expect(third.isPartitioned).toBe(true);
    expect(third.partitionedTopicName).toBe('persistent://t/ns/orders');
    expect(third.partition(5).toString()).toBe('persistent://t/ns/orders-partition-5');
    expect(third.equals(TopicName.parse('t/ns/orders-partition-3'))).toBe(true);
    expect(TopicName.parse('non-persistent://t/ns/a-partition-1-partition-2').partitionedTopicName).toBe(
      'non-persistent://t/ns/a-partition-1',
    );
  });

  it.each([-1, 1.5, MAX_PARTITION_INDEX + 1, NaN, '1'])('rejects partition(%p)', (index) => {
    expectNamingError(() => TopicName.parse('x').partition(index as number), 'INVALID_PARTITION_INDEX');
  });

  it('rejects a partition whose name would be too long', () => {
    const topic = TopicName.parse('x'.repeat(MAX_LOCAL_NAME_LENGTH - 5));
    expectNamingError(() => topic.partition(1), 'INVALID_TOPIC_NAME');
  });

  it('keeps partition(i).partitionIndex == i and the partitioned topic', () => {
    fc.assert(
      fc.property(localName, fc.integer({ min: 0, max: MAX_PARTITION_INDEX }), (local, index) => {
        const topic = TopicName.inNamespace(NamespaceName.parse('t/ns'), local);
        const partition = topic.partition(index);
        expect(partition.partitionIndex).toBe(index);
        expect(
          TopicName.parse(partition.partitionedTopicName).equals(TopicName.parse(topic.partitionedTopicName)),
        ).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('TopicName round trip and robustness', () => {
  it('parses its own toString back to an equal name', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('persistent', 'non-persistent'),
        entity,
        entity,
        localName,
        (domain, t, ns, local) => {
          const topic = TopicName.parse(`${domain}://${t}/${ns}/${local}`);
          const again = TopicName.parse(topic.toString());
          expect(again.equals(topic)).toBe(true);
          expect([again.domain, again.tenant, again.namespace, again.localName]).toEqual([domain, t, ns, local]);
          expect(TopicName.of(domain, t, ns, local).equals(topic)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws anything but INVALID_ARGUMENT on arbitrary strings', () => {
    const pieces = fc.constantFrom(
      'persistent://',
      'non-persistent://',
      '/',
      't',
      '-partition-',
      '0',
      '01',
      '\ud800',
      ' ',
    );
    const arbitrary = fc.oneof(
      anyUnits,
      fc.array(pieces, { maxLength: 8 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(arbitrary, (value) => {
        for (const run of [() => TopicName.parse(value), () => NamespaceName.parse(value)]) {
          try {
            run();
          } catch (thrown) {
            expect(thrown).toBeInstanceOf(LedgerlineError);
            expect((thrown as LedgerlineError).code).toBe('INVALID_ARGUMENT');
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
