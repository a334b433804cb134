// Pulsar's stored message layout: encode what a producer sends, decode what a consumer receives.
export { encodeMessageEntry, messageCount } from './encode.js';
export { decodeMessageEntry } from './decode.js';
export { messageTimeMs, messageTimesMs, KEPT_TIMESTAMP_PROPERTY } from './message-times.js';
export type {
  EntryInput,
  BatchedMessageInput,
  DecodedMessage,
  DecodedEntryHeader,
  DecodedMessageEntry,
} from './message.js';
export { MessageFormatReason } from './reasons.js';

// For other packages: the layout constants and every bound the codec enforces.
export {
  CHECKSUM_MAGIC,
  MESSAGE_HEADER_BYTES,
  MAX_ENTRY_BYTES,
  MAX_METADATA_BYTES,
  MAX_SINGLE_METADATA_BYTES,
  MAX_MESSAGES_PER_BATCH,
  MAX_PROPERTIES_PER_MESSAGE,
  MAX_KEY_BYTES,
  MAX_PRODUCER_NAME_BYTES,
  MAX_PROPERTY_BYTES,
  MAX_SEQUENCE_ID,
} from './limits.js';
