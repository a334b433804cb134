import type { z } from 'zod';
import { settingSource } from './config.js';

interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  defaultValue?: unknown;
  entries?: Record<string, string>;
}

/** What a setting takes and what it is when nobody sets it, read through its default/optional wrappers. */
function describeSetting(schema: z.ZodType): { kind: string; fallback: string } {
  let def = schema._zod.def as SchemaDef;
  let fallback = 'unset';
  while (def.innerType !== undefined) {
    if (def.type === 'default') {
      const value = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
      fallback = JSON.stringify(value) ?? 'unset';
    }
    def = def.innerType._zod.def as SchemaDef;
  }
  const kind = def.type === 'enum' && def.entries !== undefined ? Object.values(def.entries).join('|') : def.type;
  return { kind, fallback };
}

/**
 * Every setting of a service's schema as a help table: its flag, its
 * environment variable, what it takes and its default, so `--help` lists
 * exactly what loadConfig accepts and never drifts from it.
 */
export function settingsHelp(schema: z.ZodObject, notes: Record<string, string> = {}, prefix = 'LEDGERLINE_'): string {
  const shape = schema.shape as Record<string, z.ZodType>;
  const rows = Object.keys(shape).map((key) => {
    const source = settingSource(key, prefix);
    const { kind, fallback } = describeSetting(shape[key]!);
    const note = notes[key] ?? (fallback === '0' && key.endsWith('Port') ? 'a free port' : fallback);
    return { flag: `${source.flag} <${kind}>`, env: source.env, note };
  });
  const flagWidth = Math.max(...rows.map((r) => r.flag.length));
  const envWidth = Math.max(...rows.map((r) => r.env.length));
  const lines = rows.map((r) => `  ${r.flag.padEnd(flagWidth)}  ${r.env.padEnd(envWidth)}  default: ${r.note}`);
  return ['Settings (a flag overrides its environment variable):', ...lines].join('\n');
}
