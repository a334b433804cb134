import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import type { z } from 'zod';

export interface LoadConfigOptions {
  /** Defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** Command-line arguments (flags only), defaults to process.argv.slice(2). Flags override env. */
  argv?: readonly string[];
  /** Prefix of the environment variables, defaults to `LEDGERLINE_`. */
  prefix?: string;
}

/** Where a setting comes from: `grpcPort` is `LEDGERLINE_GRPC_PORT` or `--grpc-port`. */
export interface SettingSource {
  setting: string;
  env: string;
  flag: string;
}

export function settingSource(setting: string, prefix = 'LEDGERLINE_'): SettingSource {
  const words = setting
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(' ');
  const envPrefix = prefix === '' || prefix.endsWith('_') ? prefix : `${prefix}_`;
  return { setting, env: `${envPrefix}${words.join('_').toUpperCase()}`, flag: `--${words.join('-')}` };
}

function configError(message: string, source?: SettingSource): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', ErrorReason.INVALID_CONFIG, message, {
    details: source === undefined ? {} : { setting: source.setting, env: source.env, flag: source.flag },
  });
}

/** Flags as `--name value`, `--name=value`, or a bare `--name` meaning true. */
function parseFlags(argv: readonly string[], byFlag: Map<string, SettingSource>): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (!token.startsWith('--'))
      throw configError(`unexpected argument '${token}': settings are given as --name value`);
    const equals = token.indexOf('=');
    const flag = equals === -1 ? token : token.slice(0, equals);
    const source = byFlag.get(flag);
    if (source === undefined) {
      throw configError(`unknown setting ${flag}; known settings: ${[...byFlag.keys()].sort().join(', ')}`);
    }
    const next = argv[i + 1];
    if (equals !== -1) values.set(source.setting, token.slice(equals + 1));
    else if (next !== undefined && !next.startsWith('--')) values.set(source.setting, argv[++i]!);
    else values.set(source.setting, 'true');
  }
  return values;
}

/** A schema's definition as far as settings need it: its kind, an enum's values, a wrapper's inner schema. */
export interface SettingDef {
  type: string;
  innerType?: z.ZodType;
  defaultValue?: unknown;
  entries?: Record<string, string>;
}

/**
 * The innermost definition under default/optional wrappers ('number',
 * 'boolean', 'string', ...), with the default met on the way, if any.
 */
export function unwrapSetting(schema: z.ZodType): { def: SettingDef; defaultValue?: unknown } {
  let def = schema._zod.def as SettingDef;
  let found: { defaultValue: unknown } | undefined;
  while (def.innerType !== undefined) {
    if (def.type === 'default' && found === undefined) found = { defaultValue: def.defaultValue };
    def = def.innerType._zod.def as SettingDef;
  }
  return { def, ...found };
}

function baseType(schema: z.ZodType): string {
  return unwrapSetting(schema).def.type;
}

const truthy = new Set(['true', '1', 'yes', 'on']);
const falsy = new Set(['false', '0', 'no', 'off']);

/**
 * Settings arrive as text; numbers and booleans are converted here so schemas
 * can say `z.number()`. Text that does not convert is passed on unchanged and
 * the schema rejects it with a message naming the setting.
 */
function fromText(text: string, type: string): unknown {
  if (type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (type === 'boolean' && truthy.has(text.toLowerCase())) return true;
  if (type === 'boolean' && falsy.has(text.toLowerCase())) return false;
  return text;
}

/**
 * Reads a service's settings from environment variables, lets command-line
 * flags override them, and validates them with a zod object schema. A bad
 * or unknown setting fails with INVALID_ARGUMENT / INVALID_CONFIG and a message
 * naming the setting, its environment variable and its flag.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, options: LoadConfigOptions = {}): z.output<S> {
  const env = options.env ?? process.env;
  const shape = schema.shape as Record<string, z.ZodType>;
  const sources = Object.keys(shape).map((key) => settingSource(key, options.prefix ?? 'LEDGERLINE_'));
  const flags = parseFlags(options.argv ?? process.argv.slice(2), new Map(sources.map((s) => [s.flag, s])));
  const raw: Record<string, unknown> = {};
  for (const source of sources) {
    const text = flags.get(source.setting) ?? env[source.env];
    if (text !== undefined) raw[source.setting] = fromText(text, baseType(shape[source.setting]!));
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const bySetting = new Map(sources.map((s) => [s.setting, s]));
  const lines = parsed.error.issues.map((issue) => {
    const source = bySetting.get(String(issue.path[0]));
    const where = source === undefined ? 'config' : `${source.setting} (${source.env} or ${source.flag})`;
    const given = source === undefined ? undefined : (flags.get(source.setting) ?? env[source.env]);
    return `${where}${given === undefined ? '' : ` = '${given}'`}: ${issue.message}`;
  });
  throw configError(
    `invalid configuration: ${lines.join('; ')}`,
    bySetting.get(String(parsed.error.issues[0]?.path[0])),
  );
}
