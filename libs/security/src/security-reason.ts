/** The reasons the security package raises: bad TLS files, refused callers, bad tokens. */
export const SecurityReason = {
  /** A certificate, key or CA file is missing, unreadable or does not parse. */
  TLS_FILES_INVALID: 'TLS_FILES_INVALID',
  /** TLS settings that do not go together (a key without a certificate, a CA without TLS). */
  TLS_CONFIG_INVALID: 'TLS_CONFIG_INVALID',
  /** An internal API was called without a verified Ledgerline service certificate. */
  SERVICE_CERTIFICATE_REQUIRED: 'SERVICE_CERTIFICATE_REQUIRED',
  /** An internal API was called by a service identity that may not call it. */
  SERVICE_NOT_ALLOWED: 'SERVICE_NOT_ALLOWED',
  /** Authentication is on and the call carried no bearer token. */
  TOKEN_MISSING: 'TOKEN_MISSING',
  /** The token does not parse, is signed with the wrong key or algorithm, or names the wrong issuer or audience. */
  TOKEN_INVALID: 'TOKEN_INVALID',
  /** The token's exp is in the past. */
  TOKEN_EXPIRED: 'TOKEN_EXPIRED',
  /** The token's nbf is in the future. */
  TOKEN_NOT_YET_VALID: 'TOKEN_NOT_YET_VALID',
  /** The call needs a super-user role (tenants, owners, methods outside the permission table). */
  SUPER_USER_REQUIRED: 'SUPER_USER_REQUIRED',
  /** The call administers a tenant's namespaces or topics and the role is not among the tenant's admin roles. */
  TENANT_ADMIN_REQUIRED: 'TENANT_ADMIN_REQUIRED',
  /** The role was not granted the produce or consume permission the call needs on the topic's namespace. */
  PERMISSION_NOT_GRANTED: 'PERMISSION_NOT_GRANTED',
  /** Token settings that do not go together (no key, a key that does not parse). */
  AUTH_CONFIG_INVALID: 'AUTH_CONFIG_INVALID',
  /** A JWKS file or key could not be read or used. */
  TOKEN_KEY_INVALID: 'TOKEN_KEY_INVALID',
} as const;

export type SecurityReason = (typeof SecurityReason)[keyof typeof SecurityReason];
