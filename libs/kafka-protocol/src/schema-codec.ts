import { ByteReader } from './byte-reader.js';
import type { ByteWriter } from './byte-writer.js';
import { KafkaProtocolReason, protocolError } from './protocol-error.js';
import { SplicedBytes } from './spliced-bytes.js';
import { inRange, isArrayType, isStruct, type Field, type FieldType, type Primitive, type Struct } from './schema.js';

/** A decoded message: field names to values (int64 as bigint, bytes as Buffer, structs as objects). */
export type Message = Record<string, unknown>;

/** Bound on nesting depth: the schemas nest three or four deep; nothing legitimate comes near this. */
const MAX_DEPTH = 16;

interface Context {
  readonly version: number;
  readonly flexible: boolean;
}

/** The smallest encoding of one element, so an array count is checked against the bytes left before reading. */
function minBytes(type: Primitive | Struct, context: Context): number {
  if (isStruct(type)) return context.flexible ? 1 : 0;
  switch (type) {
    case 'int8':
    case 'bool':
      return 1;
    case 'int16':
      return 2;
    case 'int32':
      return 4;
    case 'int64':
    case 'float64':
      return 8;
    case 'uuid':
      return 16;
    case 'string':
      return context.flexible ? 1 : 2;
    default:
      return context.flexible ? 1 : 4;
  }
}

function primitiveDefault(type: FieldType): unknown {
  if (isArrayType(type)) return [];
  if (isStruct(type)) return null;
  switch (type) {
    case 'int64':
      return 0n;
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'records':
      return null;
    case 'uuid':
      return Buffer.alloc(16);
    default:
      return 0;
  }
}

/** The value of a field that is not on the wire in this version. */
export function defaultOf(field: Field): unknown {
  if (field.default !== undefined) return typeof field.default === 'function' ? field.default() : field.default;
  return primitiveDefault(field.type);
}

function readPrimitive(
  reader: ByteReader,
  type: Primitive,
  nullable: boolean,
  context: Context,
  what: string,
): unknown {
  switch (type) {
    case 'int8':
      return reader.int8(what);
    case 'int16':
      return reader.int16(what);
    case 'int32':
      return reader.int32(what);
    case 'int64':
      return reader.int64(what);
    case 'float64':
      return reader.float64(what);
    case 'bool':
      return reader.bool(what);
    case 'uuid':
      return reader.uuid(what);
    case 'string':
      return reader.string(nullable, context.flexible, what);
    case 'bytes':
      return reader.byteString(nullable, context.flexible, what);
    case 'records':
      return reader.byteString(true, context.flexible, what);
  }
}

function readValue(reader: ByteReader, field: Field, context: Context, depth: number): unknown {
  const nullable = inRange(field.nullable, context.version);
  const type = field.type;
  if (isArrayType(type)) {
    const count = reader.arrayLength(nullable, context.flexible, minBytes(type.array, context), field.name);
    if (count === -1) return null;
    const values: unknown[] = [];
    for (let index = 0; index < count; index++) {
      values.push(
        isStruct(type.array)
          ? readStruct(reader, type.array, context, depth + 1)
          : readPrimitive(reader, type.array, false, context, field.name),
      );
    }
    return values;
  }
  if (isStruct(type)) {
    if (nullable && reader.int8(field.name) === -1) return null;
    return readStruct(reader, type, context, depth + 1);
  }
  return readPrimitive(reader, type, nullable, context, field.name);
}

/** Tagged fields: known tags are decoded into their fields, unknown ones skipped (as Kafka does). */
function readTaggedFields(reader: ByteReader, fields: Struct, message: Message, context: Context, depth: number): void {
  // A plain count (not count + 1 as compact arrays): each tagged field takes at least two bytes.
  const count = reader.uvarint('tagged field count');
  if (count * 2 > reader.remaining) {
    throw protocolError(
      KafkaProtocolReason.KAFKA_TRUNCATED,
      `${count} tagged fields with ${reader.remaining} bytes left`,
    );
  }
  let previous = -1;
  for (let index = 0; index < count; index++) {
    const tag = reader.uvarint('tag');
    if (tag <= previous) throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `tag ${tag} is out of order`);
    previous = tag;
    const size = reader.uvarint('tagged field size');
    const body = reader.bytes(size, `tagged field ${tag}`);
    const known = fields.find((candidate) => candidate.tag === tag && inRange(candidate.versions, context.version));
    if (known === undefined) continue;
    const inner = new ByteReader(body);
    message[known.name] = readValue(inner, known, context, depth);
    inner.expectEnd(`tagged field ${known.name}`);
  }
}

export function readStruct(reader: ByteReader, fields: Struct, context: Context, depth = 0): Message {
  if (depth > MAX_DEPTH) throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, 'structs nest too deeply');
  const message: Message = {};
  for (const field of fields) {
    const onWire = inRange(field.versions, context.version) && !(context.flexible && field.tag !== undefined);
    message[field.name] = onWire ? readValue(reader, field, context, depth) : defaultOf(field);
  }
  if (context.flexible) readTaggedFields(reader, fields, message, context, depth);
  return message;
}

function badValue(field: Field, value: unknown): Error {
  return protocolError(KafkaProtocolReason.KAFKA_BAD_VALUE, `field ${field.name} cannot hold ${String(value)}`);
}

function writePrimitive(writer: ByteWriter, type: Primitive, value: unknown, field: Field, context: Context): void {
  switch (type) {
    case 'int8':
    case 'int16':
    case 'int32':
      if (typeof value !== 'number') throw badValue(field, value);
      writer[type](value);
      return;
    case 'int64':
      if (typeof value !== 'bigint') throw badValue(field, value);
      writer.int64(value);
      return;
    case 'float64':
      writer.float64(Number(value));
      return;
    case 'bool':
      writer.bool(value === true);
      return;
    case 'uuid':
      if (!(value instanceof Uint8Array) || value.length !== 16) throw badValue(field, value);
      writer.raw(value);
      return;
    case 'string':
      if (value !== null && typeof value !== 'string') throw badValue(field, value);
      writer.string(value, context.flexible);
      return;
    default:
      if (value !== null && !(value instanceof Uint8Array) && !(value instanceof SplicedBytes)) {
        throw badValue(field, value);
      }
      writer.byteString(value, context.flexible);
  }
}

function writeValue(writer: ByteWriter, field: Field, value: unknown, context: Context): void {
  const type = field.type;
  const nullable = inRange(field.nullable, context.version);
  if (value === null && !nullable && type !== 'records') throw badValue(field, value);
  if (isArrayType(type)) {
    if (value !== null && !Array.isArray(value)) throw badValue(field, value);
    writer.arrayLength(value === null ? null : value.length, context.flexible);
    for (const element of (value ?? []) as unknown[]) {
      if (isStruct(type.array)) writeStruct(writer, type.array, element as Message, context);
      else writePrimitive(writer, type.array, element, field, context);
    }
    return;
  }
  if (isStruct(type)) {
    if (nullable) writer.int8(value === null ? -1 : 1);
    if (value !== null) writeStruct(writer, type, value as Message, context);
    return;
  }
  writePrimitive(writer, type, value, field, context);
}

export function writeStruct(writer: ByteWriter, fields: Struct, message: Message, context: Context): void {
  const tagged: Field[] = [];
  for (const field of fields) {
    if (!inRange(field.versions, context.version)) continue;
    if (context.flexible && field.tag !== undefined) {
      if (message[field.name] !== undefined && message[field.name] !== field.default) tagged.push(field);
      continue;
    }
    const value = message[field.name];
    writeValue(writer, field, value === undefined ? defaultOf(field) : value, context);
  }
  if (!context.flexible) return;
  writer.uvarint(tagged.length);
  for (const field of tagged.sort((a, b) => (a.tag ?? 0) - (b.tag ?? 0))) {
    const start = writer.length;
    writeValue(writer, field, message[field.name], context);
    // The tagged value's size precedes it: written after the fact by moving the bytes.
    const body = Buffer.from(writer.view(start));
    writer.truncate(start);
    writer
      .uvarint(field.tag ?? 0)
      .uvarint(body.length)
      .raw(body);
  }
}
