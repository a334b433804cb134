export { FrameDecoder, frame, DEFAULT_MAX_FRAME_SIZE_BYTES, MIN_REQUEST_FRAME_BYTES } from './framing.js';
export {
  decodeRequest,
  encodeResponse,
  encodeResponseChunks,
  encodeRequest,
  decodeResponse,
  peekRequestHeader,
  isVersionSupported,
} from './messages.js';
export type { RequestHeader, DecodedRequest } from './messages.js';
export { API_SPECS, ApiKey, apiSpec, supportedApiVersions } from './api-table.js';
export { isFlexible } from './apis/api-spec.js';
export type { ApiSpec } from './apis/api-spec.js';
export { KafkaErrorCode } from './error-codes.js';
export type { KafkaErrorCodeValue } from './error-codes.js';
export {
  decodeRecordBatches,
  encodeRecordBatch,
  encodePlainRecordBatch,
  Compression,
  RECORD_BATCH_OVERHEAD_BYTES,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
} from './record-batch.js';
export type {
  BatchProducerIds,
  RecordBatch,
  KafkaRecord,
  RecordHeader,
  CompressionValue,
  DecodeBatchOptions,
} from './record-batch.js';
export { SplicedBytes } from './spliced-bytes.js';
export { KafkaProtocolReason, isProtocolError } from './protocol-error.js';
export type { KafkaProtocolReasonValue } from './protocol-error.js';

// For other packages and tests: the schema table building blocks and the primitive codec.
export { field, arrayOf, versions, inRange } from './schema.js';
export type { Field, FieldType, Primitive, Struct, VersionRange } from './schema.js';
export { readStruct, writeStruct } from './schema-codec.js';
export type { Message } from './schema-codec.js';
export { ByteReader } from './byte-reader.js';
export {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
} from './consumer-assignment.js';
export type { AssignedTopic } from './consumer-assignment.js';
export { ByteWriter } from './byte-writer.js';
