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
} as const;
