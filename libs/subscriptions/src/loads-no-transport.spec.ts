import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const workspaceRoot = path.resolve(__dirname, '../../..');

/** Module folders whose presence would mean the lib needs a network or a store to load. */
const IO_MODULES = ['@grpc', 'ioredis', 'better-sqlite3', '@nats-io'];

describe('@ledgerline/subscriptions', () => {
  it('loads no transport and no store (both owners embed it; its tests need no network)', () => {
    // A fresh process, so Jest's module registry cannot hide what the index pulls in.
    const script = `require(${JSON.stringify(path.join(workspaceRoot, 'libs/subscriptions/src/index.ts'))});
process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
    const loaded = JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: workspaceRoot,
        encoding: 'utf8',
        timeout: 20_000,
      }),
    ) as string[];
    expect(loaded.some((file) => file.includes(path.join('libs', 'subscriptions', 'src')))).toBe(true);
    const io = loaded.filter((file) => IO_MODULES.some((name) => file.includes(`${path.sep}${name}${path.sep}`)));
    expect(io).toEqual([]);
  });
});
