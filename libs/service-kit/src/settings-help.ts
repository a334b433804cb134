import type { z } from 'zod';
import { settingSource, unwrapSetting } from './config.js';

/** What a setting takes and what it is when nobody sets it. */
function describeSetting(schema: z.ZodType): { kind: string; fallback: string } {
  const { def, ...found } = unwrapSetting(schema);
  const value = typeof found.defaultValue === 'function' ? (found.defaultValue as () => unknown)() : found.defaultValue;
  const fallback = 'defaultValue' in found ? (JSON.stringify(value) ?? 'unset') : 'unset';
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
