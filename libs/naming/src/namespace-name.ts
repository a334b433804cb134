import { MAX_NAMESPACE_NAME_LENGTH, MAX_TENANT_NAME_LENGTH } from './limits.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';
import { validateNamespace, validateTenant } from './validate-names.js';

/** A namespace, `tenant/namespace`. Only Pulsar's V2 form (no cluster segment) exists here. */
export class NamespaceName {
  /** The tenant, e.g. `public`. */
  readonly tenant: string;
  /** The namespace within the tenant, e.g. `default` (Pulsar's "namespace portion"). */
  readonly namespace: string;
  readonly #fullName: string;

  private constructor(tenant: string, namespace: string) {
    this.tenant = tenant;
    this.namespace = namespace;
    this.#fullName = `${tenant}/${namespace}`;
  }

  /** Parses `tenant/namespace`; anything else throws INVALID_NAMESPACE_NAME or INVALID_TENANT_NAME. */
  static parse(name: string): NamespaceName {
    if (typeof name !== 'string' || name.length > MAX_TENANT_NAME_LENGTH + 1 + MAX_NAMESPACE_NAME_LENGTH) {
      throw namingError(
        NamingErrorReason.INVALID_NAMESPACE_NAME,
        `namespace name ${quote(name)} must be a string of the form <tenant>/<namespace>, at most ${MAX_TENANT_NAME_LENGTH + 1 + MAX_NAMESPACE_NAME_LENGTH} characters long`,
      );
    }
    const slash = name.indexOf('/');
    if (slash === -1 || name.indexOf('/', slash + 1) !== -1) {
      throw namingError(
        NamingErrorReason.INVALID_NAMESPACE_NAME,
        `namespace name ${quote(name)} must have the form <tenant>/<namespace>`,
      );
    }
    const context = `namespace name ${quote(name)}`;
    return new NamespaceName(
      validateTenant(name.slice(0, slash), context),
      validateNamespace(name.slice(slash + 1), context),
    );
  }

  /** Builds a namespace from its two parts, validating both. */
  static of(tenant: string, namespace: string): NamespaceName {
    return new NamespaceName(validateTenant(tenant), validateNamespace(namespace));
  }

  /** True when `name` parses. */
  static isValid(name: string): boolean {
    try {
      NamespaceName.parse(name);
      return true;
    } catch {
      return false;
    }
  }

  equals(other: unknown): boolean {
    return other instanceof NamespaceName && other.#fullName === this.#fullName;
  }

  /** `tenant/namespace`. */
  toString(): string {
    return this.#fullName;
  }

  toJSON(): string {
    return this.#fullName;
  }
}
