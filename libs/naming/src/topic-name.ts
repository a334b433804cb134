import { MAX_LOCAL_NAME_LENGTH, MAX_PARTITION_INDEX, MAX_TOPIC_NAME_LENGTH } from './limits.js';
import { NamespaceName } from './namespace-name.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';
import { PARTITIONED_TOPIC_SUFFIX, partitionIndexOf, partitionedLocalName } from './partition-index.js';
import { encodeLocalName } from './url-codec.js';
import { validateLocalName, validateNamespace, validateTenant } from './validate-names.js';

/** The two topic domains; only `persistent` topics have a managed ledger in Pulsar. */
export const TOPIC_DOMAINS = ['persistent', 'non-persistent'] as const;
export type TopicDomain = (typeof TOPIC_DOMAINS)[number];

/** The tenant and namespace short topic names expand into (`x` -> `persistent://public/default/x`). */
export const DEFAULT_TENANT = 'public';
export const DEFAULT_NAMESPACE = 'default';
const DEFAULT_NAMESPACE_NAME = NamespaceName.of(DEFAULT_TENANT, DEFAULT_NAMESPACE);

/** Checks a domain string (exact, lower case) and returns it typed. */
export function validateDomain(domain: unknown, context?: string): TopicDomain {
  if (domain === 'persistent' || domain === 'non-persistent') return domain;
  const where = context === undefined ? '' : ` in ${context}`;
  throw namingError(
    NamingErrorReason.INVALID_TOPIC_NAME,
    `unknown topic domain ${quote(domain)}${where}: expected 'persistent' or 'non-persistent'`,
  );
}

/**
 * A topic name, `<domain>://<tenant>/<namespace>/<localName>`. Instances are
 * immutable and always valid; compare them with `equals` or by `toString()`.
 */
export class TopicName {
  readonly domain: TopicDomain;
  readonly namespaceName: NamespaceName;
  /** The topic's name inside its namespace; never empty, never contains `/`. */
  readonly localName: string;
  /** The partition number when this topic is `<base>-partition-<N>`, else -1. */
  readonly partitionIndex: number;
  readonly #fullName: string;

  private constructor(domain: TopicDomain, namespaceName: NamespaceName, localName: string) {
    this.domain = domain;
    this.namespaceName = namespaceName;
    this.localName = localName;
    this.partitionIndex = partitionIndexOf(localName);
    this.#fullName = `${domain}://${namespaceName.toString()}/${localName}`;
  }

  /**
   * Parses a full name (`persistent://t/ns/x`, `non-persistent://t/ns/x`) or a
   * short one (`x` is `persistent://public/default/x`, `t/ns/x` is
   * `persistent://t/ns/x`). Unlike Pulsar, empty segments are never skipped.
   */
  static parse(name: string): TopicName {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TOPIC_NAME_LENGTH) {
      throw namingError(
        NamingErrorReason.INVALID_TOPIC_NAME,
        `topic name ${quote(name)} must be a string of 1 to ${MAX_TOPIC_NAME_LENGTH} characters`,
      );
    }
    const context = `topic name ${quote(name)}`;
    const separator = name.indexOf('://');
    const domain = separator === -1 ? 'persistent' : validateDomain(name.slice(0, separator), context);
    const parts = (separator === -1 ? name : name.slice(separator + 3)).split('/');
    if (separator === -1 && parts.length === 1) {
      return new TopicName(domain, DEFAULT_NAMESPACE_NAME, validateLocalName(name, context));
    }
    if (parts.length !== 3) {
      const expected =
        separator === -1 ? '<topic> or <tenant>/<namespace>/<topic>' : '<domain>://<tenant>/<namespace>/<topic>';
      const why = parts.length > 3 ? ' (a local name may not contain "/")' : '';
      throw namingError(NamingErrorReason.INVALID_TOPIC_NAME, `${context} must have the form ${expected}${why}`);
    }
    const [tenant, namespace, localName] = parts as [string, string, string];
    return TopicName.of(domain, tenant, namespace, localName, context);
  }

  /** Builds a topic from its parts, validating each. */
  static of(domain: TopicDomain, tenant: string, namespace: string, localName: string, context?: string): TopicName {
    const checkedDomain = validateDomain(domain, context);
    validateTenant(tenant, context);
    validateNamespace(namespace, context);
    return new TopicName(checkedDomain, NamespaceName.of(tenant, namespace), validateLocalName(localName, context));
  }

  /** The topic `localName` in a namespace, persistent unless a domain is given. */
  static inNamespace(namespaceName: NamespaceName, localName: string, domain: TopicDomain = 'persistent'): TopicName {
    if (!(namespaceName instanceof NamespaceName)) {
      throw namingError(
        NamingErrorReason.INVALID_NAMESPACE_NAME,
        `expected a NamespaceName, got ${quote(namespaceName)}`,
      );
    }
    return new TopicName(validateDomain(domain), namespaceName, validateLocalName(localName));
  }

  /** True when `name` parses. */
  static isValid(name: string): boolean {
    try {
      TopicName.parse(name);
      return true;
    } catch {
      return false;
    }
  }

  get tenant(): string {
    return this.namespaceName.tenant;
  }

  /** The namespace within the tenant (`ns` of `t/ns`); `namespaceName` is the whole `t/ns`. */
  get namespace(): string {
    return this.namespaceName.namespace;
  }

  get isPersistent(): boolean {
    return this.domain === 'persistent';
  }

  get isPartitioned(): boolean {
    return this.partitionIndex !== -1;
  }

  /** The full name of the partitioned topic this partition belongs to; the topic's own name when it is not a partition. */
  get partitionedTopicName(): string {
    return this.isPartitioned
      ? `${this.domain}://${this.namespaceName.toString()}/${partitionedLocalName(this.localName)}`
      : this.#fullName;
  }

  /** The local name as Java's URLEncoder writes it, the form used in storage paths. */
  get encodedLocalName(): string {
    return encodeLocalName(this.localName);
  }

  /**
   * Partition `index` of this topic's partitioned topic. On a partition this
   * gives its sibling (`x-partition-1`.partition(2) is `x-partition-2`), where
   * Pulsar would append a second suffix.
   */
  partition(index: number): TopicName {
    if (!Number.isInteger(index) || index < 0 || index > MAX_PARTITION_INDEX) {
      throw namingError(
        NamingErrorReason.INVALID_PARTITION_INDEX,
        `partition index must be an integer from 0 to ${MAX_PARTITION_INDEX}, got ${typeof index === 'number' ? index : quote(index)}`,
      );
    }
    const localName = `${partitionedLocalName(this.localName)}${PARTITIONED_TOPIC_SUFFIX}${index}`;
    if (localName.length > MAX_LOCAL_NAME_LENGTH) {
      throw namingError(
        NamingErrorReason.INVALID_TOPIC_NAME,
        `partition ${index} of ${quote(this.#fullName)} would have a local name longer than ${MAX_LOCAL_NAME_LENGTH}`,
      );
    }
    return new TopicName(this.domain, this.namespaceName, localName);
  }

  equals(other: unknown): boolean {
    return other instanceof TopicName && other.#fullName === this.#fullName;
  }

  /** The full form, `<domain>://<tenant>/<namespace>/<localName>`. */
  toString(): string {
    return this.#fullName;
  }

  toJSON(): string {
    return this.#fullName;
  }
}
