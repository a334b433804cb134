import type { DescMessage } from '@bufbuild/protobuf';

/**
 * A message already in its wire form, which a handler may return or yield in
 * place of the message: the server writes its bytes as they are. For hot paths
 * that encode by hand (with @bufbuild/protobuf's BinaryWriter) what would
 * otherwise be built as objects and encoded by reflection, message by message.
 * The schema says what the bytes are; it must be the method's output.
 */
export class EncodedMessage<Schema extends DescMessage = DescMessage> {
  constructor(
    readonly schema: Schema,
    readonly bytes: Uint8Array,
  ) {}
}
