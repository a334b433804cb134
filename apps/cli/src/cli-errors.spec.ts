import { freePort } from '@ledgerline/testing';
import { EXIT_CODES } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { runCli } from './program.js';

interface Captured {
  code: number;
  out: string[];
  err: string[];
}

/** Runs the command line in this process with its output captured. */
async function ledgerline(...args: string[]): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(...line.split('\n')),
    err: (line) => err.push(...line.split('\n')),
    progress: () => ({ advance: () => {}, stop: () => {} }),
  };
  const code = await runCli(io, ['node', 'ledgerline', ...args]);
  return { code, out, err };
}

/** A mistake is one line on stderr, nothing on stdout, and the status --help promises for it. */
function expectOneLineError(run: Captured, code: number, pattern: RegExp): void {
  expect(run).toMatchObject({ code, out: [] });
  expect(run.err).toHaveLength(1);
  expect(run.err[0]).toMatch(pattern);
}

describe('ledgerline command-line mistakes and an unreachable service', () => {
  let unreachable: string;
  beforeAll(async () => {
    // A free port: nothing listens there.
    unreachable = `127.0.0.1:${await freePort()}`;
  });

  it('documents its exit statuses in --help, and --help itself succeeds', async () => {
    const help = await ledgerline('--help');
    expect(help.code).toBe(EXIT_CODES.ok);
    expect(help.out.join('\n')).toContain(
      'Exit status: 0 done, 1 refused or failed by the service, 2 bad command line or settings, 3 the service could not be reached.',
    );
    expect((await ledgerline('help', 'topics')).code).toBe(EXIT_CODES.ok);
    expect((await ledgerline('topics', 'create', '--help')).code).toBe(EXIT_CODES.ok);
  });

  it('answers unknown commands and options, bad values and missing arguments with one line and status 2', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /^error: unknown command 'frobnicate' \(run with --help for usage\)$/],
      [['tenant', 'list'], /^error: unknown command 'tenant' \(Did you mean tenants\?\) \(run with --help/],
      [['tenants', 'list', '--bogus'], /^error: unknown option '--bogus'/],
      [['tenants', 'create'], /^error: missing required argument 'tenant'/],
      [['topics', 'create', 't/n/x', '--partitions', 'abc'], /^error: option '--partitions <n>' argument 'abc'/],
      [['topics', 'create', 't/n/x', '--partitions', '10001'], /expected an integer from 0 to 10000/],
      [['topics', 'create', 't/n/x', '--partitions'], /^error: option '--partitions <n>' argument missing/],
      [['namespaces', 'create', 'a/b', '--topic-buckets', '0'], /expected an integer from 1 to 1024/],
      [['namespaces', 'create', 'a/b', '--max-topics', '-1'], /expected an integer from 0 to 1000000000/],
      [['topics', 'list', 'a/b', '--page-size', '1.5'], /^error: option '--page-size <n>' argument '1.5'/],
      [['topics', 'create-many', 'a/b'], /^error: give exactly one of --count and --from-file/],
      [['topics', 'create-many', 'a/b', '--count', '2', '--from-file', 'x'], /give exactly one of/],
      [['tenants', 'list', '--url', ''], /^error: INVALID_ARGUMENT INVALID_URL: --url "" is not an address/],
      [['tenants', 'list', '--url', 'a host:1'], /^error: INVALID_ARGUMENT INVALID_URL: /],
      [
        ['standalone', '--grpc-port', 'abc'],
        /^error: INVALID_ARGUMENT INVALID_CONFIG: invalid configuration: grpcPort/,
      ],
      [['standalone', '--grpc-port', '70000'], /^error: INVALID_ARGUMENT INVALID_CONFIG: .*grpcPort/],
    ];
    for (const [args, pattern] of cases) expectOneLineError(await ledgerline(...args), EXIT_CODES.usage, pattern);
  });

  it('refuses an unreadable --from-file with one line and status 2, before calling the service', async () => {
    const run = await ledgerline(
      'topics',
      'create-many',
      'a/b',
      '--from-file',
      '/nonexistent/names',
      '--url',
      unreachable,
    );
    expectOneLineError(
      run,
      EXIT_CODES.usage,
      /^error: INVALID_ARGUMENT FILE_UNREADABLE: cannot read --from-file .*ENOENT/,
    );
  });

  it('shows the help of a bare command group as a mistake (status 2)', async () => {
    const run = await ledgerline('tenants');
    expect(run.code).toBe(EXIT_CODES.usage);
    expect(run.err.join('\n')).toContain('Usage: ledgerline tenants');
  });

  it('says in one line, with status 3, that no service answers at --url, for every admin command', async () => {
    const commands = [
      ['tenants', 'list'],
      ['tenants', 'create', 'acme'],
      ['namespaces', 'get', 'acme/ns'],
      ['topics', 'count', 'acme/ns'],
      ['topics', 'list', 'acme/ns'],
      ['topics', 'create-many', 'acme/ns', '--count', '3'],
      ['topics', 'lookup', 'acme/ns/t'],
    ];
    for (const command of commands) {
      expectOneLineError(
        await ledgerline(...command, '--url', unreachable),
        EXIT_CODES.unreachable,
        new RegExp(`^error: UNAVAILABLE TRANSPORT_UNAVAILABLE: no Ledgerline service reachable at ${unreachable} `),
      );
    }
  });
});
