/** The reasons the RPC layer itself gives: transport failures that carry no ErrorInfo, and requests a handler never saw. */
export const RpcReason = {
  BAD_LIMIT: 'BAD_LIMIT',
  BIND_FAILED: 'BIND_FAILED',
  CANCELLED: 'CANCELLED',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  HANDLER_MISSING: 'HANDLER_MISSING',
  MALFORMED_REQUEST: 'MALFORMED_REQUEST',
  /** gRPC refused a message over its size limit before any handler ran. */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  TRANSPORT_UNAVAILABLE: 'TRANSPORT_UNAVAILABLE',
  /**
   * The TLS handshake failed: the server's certificate is not from a trusted
   * CA or does not name the address, or the server refused the client's
   * certificate. Retrying does not help until the configuration changes.
   */
  TLS_HANDSHAKE_FAILED: 'TLS_HANDSHAKE_FAILED',
} as const;
