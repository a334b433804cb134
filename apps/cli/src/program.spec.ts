import { settingSource } from '@ledgerline/service-kit';
import type { CliIo } from './cli-io.js';
import { buildProgram, commandNameOf as nameOf, runCli } from './program.js';
import { standaloneServerConfigSchema } from './standalone.js';

function capture(): { io: CliIo; output: () => string } {
  let text = '';
  const io: CliIo = {
    out: (line) => (text += `${line}\n`),
    err: (line) => (text += `${line}\n`),
    progress: () => ({ advance: () => {}, stop: () => {} }),
  };
  return { io, output: () => text };
}

describe('the command line loads only the command it runs', () => {
  it('finds the command after the global options, and the one help asks about', async () => {
    const program = await buildProgram(capture().io, ['node', 'ledgerline', '--help']);
    const commandNameOf = (args: string[]) => nameOf(program, args);
    expect(commandNameOf([])).toBeUndefined();
    expect(commandNameOf(['--help'])).toBeUndefined();
    expect(commandNameOf(['tenants', 'list'])).toBe('tenants');
    expect(commandNameOf(['--url', 'h:1', '--token=t', '--tls-ca', 'ca.pem', 'topics', 'list'])).toBe('topics');
    expect(commandNameOf(['help', 'gc'])).toBe('gc');
    expect(commandNameOf(['help'])).toBe('help');
    expect(commandNameOf(['--', 'produce'])).toBe('produce');
  });

  it('lists every command in the top-level help exactly as the fully loaded program does', async () => {
    const lazy = await buildProgram(capture().io, ['node', 'ledgerline', '--help']);
    const full = await buildProgram(capture().io);
    expect(lazy.helpInformation()).toBe(full.helpInformation());
    expect(lazy.commands.map((c) => c.name())).toEqual(full.commands.map((c) => c.name()));
  });

  it('loads no command module for the top-level help, and the named one otherwise', async () => {
    const loads: string[] = [];
    const beforeCommand = async () => void loads.push('loaded');
    const help = capture();
    expect(await runCli(help.io, ['node', 'ledgerline', '--help'], { beforeCommand })).toBe(0);
    expect(help.output()).toContain('tenants');
    expect(loads).toEqual([]);
    const tenants = capture();
    expect(await runCli(tenants.io, ['node', 'ledgerline', 'tenants', '--help'], { beforeCommand })).toBe(0);
    expect(tenants.output()).toContain('create [options] <tenant>');
    expect(loads).toEqual(['loaded']);
  });

  it('suggests the nearest command for a mistyped one (every module loaded)', async () => {
    const typo = capture();
    expect(await runCli(typo.io, ['node', 'ledgerline', 'tenant', 'list'])).toBe(2);
    expect(typo.output()).toMatch(/unknown command 'tenant'.*Did you mean tenants\?/s);
  });
});

describe('ledgerline standalone --help', () => {
  it('lists every setting with its flag, its variable and its default', async () => {
    const help = capture();
    expect(await runCli(help.io, ['node', 'ledgerline', 'standalone', '--help'])).toBe(0);
    for (const setting of Object.keys(standaloneServerConfigSchema.shape)) {
      const { flag, env } = settingSource(setting);
      expect(help.output()).toMatch(new RegExp(`${flag} <[^>]+> +${env} +default: `));
    }
    expect(help.output()).toMatch(/--grpc-port <number> +LEDGERLINE_GRPC_PORT +default: 6650/);
    expect(help.output()).toMatch(
      /--read-only-grpc-port <number> +LEDGERLINE_READ_ONLY_GRPC_PORT +default: a free port/,
    );
  });
});
