import { LedgerlineError } from '@ledgerline/errors';
import type { z } from 'zod';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * The stored form of every record the service owns (everything but
 * ManagedLedgerInfo, which is Pulsar's proto2 format): a magic byte, a format
 * version, then UTF-8 JSON checked by a schema. The decoder knows every
 * version it has ever written; today that is version 1 only.
 */
const RECORD_MAGIC = 0x4c; // 'L'
const RECORD_VERSION = 1;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeRecord(record: unknown): Uint8Array {
  const json = encoder.encode(JSON.stringify(record));
  const bytes = new Uint8Array(json.length + 2);
  bytes[0] = RECORD_MAGIC;
  bytes[1] = RECORD_VERSION;
  bytes.set(json, 2);
  return bytes;
}

/**
 * Decodes a record written by encodeRecord. Bytes that do not decode are a
 * broken invariant (only this service writes these paths), so the error is
 * INTERNAL / CORRUPT_METADATA naming the path, never a silent default.
 */
export function decodeRecord<T>(path: string, bytes: Uint8Array, schema: z.ZodType<T>): T {
  if (bytes.length < 2 || bytes[0] !== RECORD_MAGIC) {
    throw corrupt(path, 'it does not start with the record magic byte');
  }
  if (bytes[1] !== RECORD_VERSION) {
    throw corrupt(path, `its format version ${bytes[1]} is unknown to this service`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes.subarray(2)));
  } catch (error) {
    throw corrupt(path, `its body is not JSON (${(error as Error).message})`);
  }
  const result = schema.safeParse(parsed);
  if (!result.success) throw corrupt(path, result.error.issues.map((issue) => issue.message).join('; '));
  return result.data;
}

function corrupt(path: string, why: string): LedgerlineError {
  return new LedgerlineError(
    'INTERNAL',
    MetadataServiceReason.CORRUPT_METADATA,
    `metadata at ${path} is unreadable: ${why}`,
    {
      details: { path },
    },
  );
}
