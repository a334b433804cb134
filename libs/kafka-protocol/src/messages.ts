import { apiSpec, ApiKey } from './api-table.js';
import { isFlexible, type ApiSpec } from './apis/api-spec.js';
import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { frame } from './framing.js';
import { KafkaProtocolReason, protocolError } from './protocol-error.js';
import { readStruct, writeStruct, type Message } from './schema-codec.js';

/** What every request starts with. Header v0 is these three; v1 adds clientId; v2 adds tagged fields. */
export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

export interface DecodedRequest {
  readonly header: RequestHeader;
  readonly spec: ApiSpec;
  readonly body: Message;
}

/** Reads the fixed part of a request header, which every version shares, so even a refused request can be answered. */
export function peekRequestHeader(frameBody: Buffer): Omit<RequestHeader, 'clientId'> {
  const reader = new ByteReader(frameBody);
  return { apiKey: reader.int16('api key'), apiVersion: reader.int16('api version'), correlationId: reader.int32() };
}

/** True when the version is outside what the codec serves for a known API. */
export function isVersionSupported(spec: ApiSpec, version: number): boolean {
  return version >= spec.minVersion && version <= spec.maxVersion;
}

function readHeader(reader: ByteReader, flexible: boolean): RequestHeader {
  const apiKey = reader.int16('api key');
  const apiVersion = reader.int16('api version');
  const correlationId = reader.int32('correlation id');
  // The client id is a classic nullable string in header v1 and v2 alike.
  const clientId = reader.string(true, false, 'client id');
  if (flexible) readStruct(reader, [], { version: 0, flexible: true });
  return { apiKey, apiVersion, correlationId, clientId };
}

/**
 * Decodes a whole request frame (without its size prefix). An unknown API
 * key or unsupported version fails KAFKA_UNKNOWN_API / KAFKA_UNSUPPORTED_VERSION;
 * callers answer ApiVersions itself in v0 (see `encodeApiVersionsFallback`).
 */
export function decodeRequest(frameBody: Buffer): DecodedRequest {
  const fixed = peekRequestHeader(frameBody);
  const spec = apiSpec(fixed.apiKey);
  if (spec === undefined) {
    throw protocolError(KafkaProtocolReason.KAFKA_UNKNOWN_API, `API key ${fixed.apiKey} is not served`);
  }
  if (!isVersionSupported(spec, fixed.apiVersion)) {
    throw protocolError(
      KafkaProtocolReason.KAFKA_UNSUPPORTED_VERSION,
      `${spec.name} v${fixed.apiVersion} is not served (v${spec.minVersion}-v${spec.maxVersion} are)`,
    );
  }
  const flexible = isFlexible(spec, fixed.apiVersion);
  const reader = new ByteReader(frameBody);
  const header = readHeader(reader, flexible);
  const body = readStruct(reader, spec.request, { version: header.apiVersion, flexible });
  if (!librdkafkaAllTopicsMetadata(spec, flexible, body))
    reader.expectEnd(`${spec.name} v${header.apiVersion} request`);
  return { header, spec, body };
}

/**
 * librdkafka (2.15 and before, its issue #5049) asks a flexible Metadata (v9+)
 * for all topics with the topic count left as the int32 placeholder it
 * reserved, 0, where a compact array takes one byte: a broker reads null
 * topics, then the next fields from the placeholder's other three zero bytes,
 * and never looks at the three bytes after them, as Kafka does not read a
 * request to its end. Refused as trailing bytes, every such request closed
 * its connection (librdkafka's test helpers wait for a topic that way).
 */
function librdkafkaAllTopicsMetadata(spec: ApiSpec, flexible: boolean, body: Message): boolean {
  return spec.key === ApiKey.Metadata && flexible && body['topics'] === null;
}

/** Response header v1 (tagged fields) for flexible versions, except ApiVersions, whose header stays v0. */
function responseHeaderFlexible(spec: ApiSpec, version: number): boolean {
  return spec.key !== ApiKey.ApiVersions && isFlexible(spec, version);
}

/** Encodes a response as a frame ready to write (size prefix included). */
export function encodeResponse(spec: ApiSpec, version: number, correlationId: number, body: Message): Buffer {
  return responseWriter(spec, version, correlationId, body).finish();
}

/**
 * A response frame as the buffers to write in order, none of them copied
 * together: the records of a SplicedBytes value (a Fetch answer's record
 * batches) are chunks of their own, between the views of what was encoded
 * around them. Written with one cork, the socket sends them in one writev.
 */
export function encodeResponseChunks(spec: ApiSpec, version: number, correlationId: number, body: Message): Buffer[] {
  return responseWriter(spec, version, correlationId, body).chunks();
}

function responseWriter(spec: ApiSpec, version: number, correlationId: number, body: Message): ByteWriter {
  // The size prefix goes in the same buffer, patched once the body is written: a Fetch answer is copied once
  // less than when the frame was put together after it.
  const writer = new ByteWriter();
  writer.int32(0).int32(correlationId);
  if (responseHeaderFlexible(spec, version)) writer.uvarint(0);
  writeStruct(writer, spec.response, body, { version, flexible: isFlexible(spec, version) });
  return writer.patchInt32(0, writer.length - 4);
}

/** Encodes a request frame (size prefix included): what a client sends. Used by tests and tools. */
export function encodeRequest(spec: ApiSpec, header: RequestHeader, body: Message): Buffer {
  const flexible = isFlexible(spec, header.apiVersion);
  const writer = new ByteWriter();
  writer.int16(header.apiKey).int16(header.apiVersion).int32(header.correlationId).string(header.clientId, false);
  if (flexible) writer.uvarint(0);
  writeStruct(writer, spec.request, body, { version: header.apiVersion, flexible });
  return frame(writer.finish());
}

/** Decodes a response frame body (without its size prefix): what a client reads. */
export function decodeResponse(
  spec: ApiSpec,
  version: number,
  frameBody: Buffer,
): { correlationId: number; body: Message } {
  const reader = new ByteReader(frameBody);
  const correlationId = reader.int32('correlation id');
  if (responseHeaderFlexible(spec, version)) readStruct(reader, [], { version: 0, flexible: true });
  const body = readStruct(reader, spec.response, { version, flexible: isFlexible(spec, version) });
  reader.expectEnd(`${spec.name} v${version} response`);
  return { correlationId, body };
}
