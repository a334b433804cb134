import { MAX_LOCAL_NAME_LENGTH, MAX_NAMESPACE_NAME_LENGTH, MAX_TENANT_NAME_LENGTH } from './limits.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';

// Pulsar's NamedEntity pattern `[-=:.\w]*`, where Java's `\w` is ASCII
// `[A-Za-z0-9_]` (as is JavaScript's without the `u` flag). We also require at
// least one character: an empty tenant or namespace would make `t//x` paths.
const NAMED_ENTITY = /^[-=:.\w]+$/;

function describe(context: string | undefined): string {
  return context === undefined ? '' : ` in ${context}`;
}

/** Checks a tenant name (Pulsar's characters `[-=:.A-Za-z0-9_]`, 1 to MAX_TENANT_NAME_LENGTH long) and returns it. */
export function validateTenant(tenant: unknown, context?: string): string {
  if (typeof tenant !== 'string' || tenant.length === 0 || tenant.length > MAX_TENANT_NAME_LENGTH) {
    throw namingError(
      NamingErrorReason.INVALID_TENANT_NAME,
      `tenant ${quote(tenant)}${describe(context)} must be 1 to ${MAX_TENANT_NAME_LENGTH} characters long`,
    );
  }
  if (!NAMED_ENTITY.test(tenant)) {
    throw namingError(
      NamingErrorReason.INVALID_TENANT_NAME,
      `tenant ${quote(tenant)}${describe(context)} may only contain letters, digits, '_', '-', '=', ':' and '.'`,
    );
  }
  return tenant;
}

/** Checks a namespace name, the part after `tenant/` (same rule as a tenant), and returns it. */
export function validateNamespace(namespace: unknown, context?: string): string {
  if (typeof namespace !== 'string' || namespace.length === 0 || namespace.length > MAX_NAMESPACE_NAME_LENGTH) {
    throw namingError(
      NamingErrorReason.INVALID_NAMESPACE_NAME,
      `namespace ${quote(namespace)}${describe(context)} must be 1 to ${MAX_NAMESPACE_NAME_LENGTH} characters long`,
    );
  }
  if (!NAMED_ENTITY.test(namespace)) {
    throw namingError(
      NamingErrorReason.INVALID_NAMESPACE_NAME,
      `namespace ${quote(namespace)}${describe(context)} may only contain letters, digits, '_', '-', '=', ':' and '.'`,
    );
  }
  return namespace;
}

/**
 * Checks a topic local name and returns it. Any character is allowed except
 * `/` (Pulsar reads `persistent://a/b/c/d` as a legacy cluster-qualified name,
 * which Ledgerline does not support) and lone UTF-16 surrogates (they have no
 * UTF-8 form, so the name could not be stored).
 */
export function validateLocalName(localName: unknown, context?: string): string {
  if (typeof localName !== 'string' || localName.length === 0 || localName.length > MAX_LOCAL_NAME_LENGTH) {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `topic local name ${quote(localName)}${describe(context)} must be 1 to ${MAX_LOCAL_NAME_LENGTH} UTF-16 code units long`,
    );
  }
  const slash = localName.indexOf('/');
  if (slash !== -1) {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `topic local name ${quote(localName)}${describe(context)} contains '/' at index ${slash}; ` +
        'names must be <domain>://<tenant>/<namespace>/<local name without slashes>',
    );
  }
  const surrogate = loneSurrogateIndex(localName);
  if (surrogate !== -1) {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `topic local name ${quote(localName)}${describe(context)} has a lone UTF-16 surrogate at index ${surrogate}`,
    );
  }
  return localName;
}

/** The index of the first unpaired surrogate in `value`, or -1 when it is well-formed UTF-16. */
export function loneSurrogateIndex(value: string): number {
  for (let index = 0; index < value.length; index++) {
    const unit = value.charCodeAt(index);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = index + 1 < value.length ? value.charCodeAt(index + 1) : 0;
    if (unit > 0xdbff || next < 0xdc00 || next > 0xdfff) return index;
    index++;
  }
  return -1;
}
