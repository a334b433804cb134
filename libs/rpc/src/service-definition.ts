import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from './errors.js';
import { EncodedMessage } from './encoded-message.js';

/**
 * A request as the server's deserializer hands it over. Decoding never throws
 * inside grpc-js (which would answer INTERNAL): a bad request is carried to the
 * handler wrapper, which answers INVALID_ARGUMENT with a reason.
 */
export type DecodedRequest = { ok: true; message: unknown } | { ok: false; error: LedgerlineError };

/** The gRPC path of a method: `/package.Service/Method`. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Serializes a message, a message init shape, or an EncodedMessage of the same schema (written as is);
 * grpc-js wants a Buffer, so the bytes are wrapped, not copied.
 */
export function serializer(schema: DescMessage): (value: unknown) => Buffer {
  return (value) => {
    let bytes: Uint8Array;
    if (value instanceof EncodedMessage) {
      if (value.schema.typeName !== schema.typeName) {
        throw new Error(`an encoded ${value.schema.typeName} was sent where ${schema.typeName} belongs`);
      }
      bytes = value.bytes;
    } else {
      bytes = toBinary(schema, create(schema, value as never));
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export function deserializer(schema: DescMessage): (bytes: Buffer) => unknown {
  return (bytes) => fromBinary(schema, bytes);
}

function safeDeserializer(method: DescMethod): (bytes: Buffer) => DecodedRequest {
  const decode = deserializer(method.input);
  return (bytes) => {
    try {
      return { ok: true, message: decode(bytes) };
    } catch (error) {
      const message = `the request is not a valid ${method.input.typeName}: ${(error as Error).message}`;
      return {
        ok: false,
        error: new LedgerlineError('INVALID_ARGUMENT', RpcReason.MALFORMED_REQUEST, message, {
          details: { method: methodPath(method) },
          cause: error,
        }),
      };
    }
  };
}

function methodDefinition(method: DescMethod): MethodDefinition<unknown, unknown> {
  return {
    path: methodPath(method),
    originalName: method.localName,
    requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
    responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
    requestSerialize: serializer(method.input),
    requestDeserialize: safeDeserializer(method),
    responseSerialize: serializer(method.output),
    responseDeserialize: deserializer(method.output),
  };
}

/**
 * The grpc-js ServiceDefinition of a protobuf-es service, keyed by each
 * method's localName. Its request deserializer yields a DecodedRequest (see
 * above); everything else is what grpc-js expects, so `Server.addService` and
 * `makeGenericClientConstructor` take it unchanged.
 */
export function createServiceDefinition(service: DescService): ServiceDefinition {
  return Object.fromEntries(service.methods.map((method) => [method.localName, methodDefinition(method)]));
}
