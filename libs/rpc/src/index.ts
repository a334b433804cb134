export { createClient, createChannel, closeClient } from './create-client.js';
export type { ClientOptions, ChannelSettings } from './create-client.js';
export { registerService } from './register-service.js';
export type { RegisterServiceOptions } from './register-service.js';
export {
  createGrpcServer,
  bindInsecure,
  bindAddress,
  bindServer,
  DEFAULT_MAX_MESSAGE_SIZE_BYTES,
  DEFAULT_MAX_CONCURRENT_STREAMS,
} from './server-options.js';
export type { GrpcLimits } from './server-options.js';
export { EncodedMessage } from './encoded-message.js';
export { createInProcessClient } from './in-process-client.js';
export type {
  CallContext,
  CallOptions,
  Client,
  ClientMethod,
  MethodImpl,
  ServiceImpl,
  UnaryImpl,
  ServerStreamingImpl,
  ClientStreamingImpl,
  BidiStreamingImpl,
  StreamedOutput,
  UnaryCall,
  ServerStreamingCall,
  ClientStreamingCall,
  BidiStreamingCall,
} from './method-types.js';
export type { CallEndInfo, Authorize } from './server-handlers.js';

// For other packages: the wire-level pieces the service kit and tools build on.
export { createServiceDefinition, methodPath } from './service-definition.js';
export type { DecodedRequest } from './service-definition.js';
export { messageSizeOptions } from './server-options.js';
export { boundedCount } from './request-bounds.js';
export { keepaliveOptions, DEFAULT_KEEPALIVE_TIME_MS, DEFAULT_KEEPALIVE_TIMEOUT_MS } from './keepalive.js';
export type { KeepaliveSettings } from './keepalive.js';
export {
  ERROR_TRAILER_KEY,
  errorToStatus,
  errorFromServiceError,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_ERROR_DETAILS,
  MAX_ERROR_DETAIL_CHARS,
} from './error-wire.js';
export { RpcReason } from './errors.js';
