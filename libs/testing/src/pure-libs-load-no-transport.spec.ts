import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const workspaceRoot = path.resolve(__dirname, '../../..');
const PURE_LIBS = ['naming', 'cursor-codec', 'offset-index', 'errors', 'ledger-info', 'metadata-contract'] as const;

/**
 * Loads one package's index in a fresh Node process (so Jest's module registry
 * and earlier imports cannot hide anything) and lists every module file it
 * pulled in.
 */
function modulesLoadedBy(lib: string): string[] {
  const script = `require(${JSON.stringify(path.join(workspaceRoot, 'libs', lib, 'src', 'index.ts'))});
process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: workspaceRoot,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return JSON.parse(output) as string[];
}

describe('pure libs load no transport', () => {
  it.each(PURE_LIBS)('importing @ledgerline/%s loads no @grpc/grpc-js module', (lib) => {
    const loaded = modulesLoadedBy(lib);
    expect(loaded.some((file) => file.includes(path.join('libs', lib, 'src')))).toBe(true);
    expect(loaded.filter((file) => file.includes(`${path.sep}@grpc${path.sep}`))).toEqual([]);
  });

  it('the metadata service loads no ledger-store backend (it reads ManagedLedgerInfo through ledger-info)', () => {
    const loaded = modulesLoadedBy('metadata-service');
    expect(
      loaded.some((file) => file.includes(path.join('libs', 'ledger-info', 'src', 'managed-ledger-info.ts'))),
    ).toBe(true);
    expect(loaded.filter((file) => file.includes(path.join('libs', 'ledger-store', 'src')))).toEqual([]);
    expect(loaded.filter((file) => file.includes(path.join('libs', 'managed-ledger', 'src')))).toEqual([]);
  });

  it('the check sees grpc-js where it is loaded', () => {
    expect(modulesLoadedBy('rpc').some((file) => file.includes(`${path.sep}@grpc${path.sep}grpc-js`))).toBe(true);
  });
});
