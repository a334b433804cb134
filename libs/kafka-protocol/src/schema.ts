/**
 * A compact form of Kafka's message JSON specs (clients/src/main/resources/
 * common/message/*.json): a struct is a list of fields, each with the versions
 * it exists in, the versions it may be null in, and its default. Flexible
 * versions (compact strings, arrays and bytes, tagged fields) are a property of
 * the message, not of a field, as in the specs.
 */
export type Primitive =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float64'
  | 'bool'
  | 'string'
  | 'bytes'
  /** Record data: nullable bytes holding record batches, decoded by record-batch.ts. */
  | 'records'
  | 'uuid';

export interface ArrayType {
  readonly array: Primitive | Struct;
}

export type FieldType = Primitive | ArrayType | Struct;

/** Inclusive version bounds; max undefined means "and every later version". */
export interface VersionRange {
  readonly min: number;
  readonly max: number | undefined;
}

export interface Field {
  readonly name: string;
  readonly type: FieldType;
  readonly versions: VersionRange;
  readonly nullable: VersionRange | undefined;
  /** The value a field absent in a version takes, and the value of a tagged field not sent. */
  readonly default: unknown;
  /** A tagged field's tag (flexible versions only): sent only when it differs from its default. */
  readonly tag: number | undefined;
}

export type Struct = readonly Field[];

/** Parses a version range as the specs write it: "3+", "0-4", "2". */
export function versions(text: string): VersionRange {
  const plus = /^(\d+)\+$/.exec(text);
  if (plus !== null) return { min: Number(plus[1]), max: undefined };
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (range !== null) return { min: Number(range[1]), max: Number(range[2]) };
  const single = /^(\d+)$/.exec(text);
  if (single !== null) return { min: Number(single[1]), max: Number(single[1]) };
  throw new Error(`bad version range "${text}" in a schema table`);
}

export function inRange(range: VersionRange | undefined, version: number): boolean {
  return range !== undefined && version >= range.min && (range.max === undefined || version <= range.max);
}

export interface FieldOptions {
  nullable?: string;
  default?: unknown;
  tag?: number;
}

/** One field of a schema table: `field('throttleTimeMs', 'int32', '1+')`. */
export function field(name: string, type: FieldType, versionText: string, options: FieldOptions = {}): Field {
  return {
    name,
    type,
    versions: versions(versionText),
    nullable: options.nullable === undefined ? undefined : versions(options.nullable),
    default: options.default,
    tag: options.tag,
  };
}

/** An array field: `arrayOf('topics', [...fields], '0+')`. */
export function arrayOf(
  name: string,
  element: Primitive | Struct,
  versionText: string,
  options: FieldOptions = {},
): Field {
  return field(name, { array: element }, versionText, options);
}

export function isArrayType(type: FieldType): type is ArrayType {
  return typeof type === 'object' && !Array.isArray(type) && 'array' in type;
}

export function isStruct(type: FieldType | Primitive | Struct): type is Struct {
  return Array.isArray(type);
}
