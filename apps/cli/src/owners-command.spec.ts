import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OwnerRole, type OwnerInfo } from '@ledgerline/proto';
import { create } from '@bufbuild/protobuf';
import { OwnerInfoSchema } from '@ledgerline/proto';
import { eventually } from '@ledgerline/testing';
import { ownersTable } from './commands/owners-commands.js';
import { ledgerline } from './testing/run-cli.js';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

function owner(instanceId: string, group: string, topicsOwned: number, messagesInPerSecond: number): OwnerInfo {
  return create(OwnerInfoSchema, {
    instanceId,
    group,
    role: OwnerRole.WRITER,
    advertisedAddress: `${instanceId}:6650`,
    load: { topicsOwned, messagesInPerSecond, cpuShare: 0.5, pendingEntries: 2n, intervalMs: 3_000n },
    loadReportedAtMs: 1_000n,
  });
}

describe('ledgerline owners list', () => {
  it('prints a table per group with a row per instance and the group total', () => {
    const lines = ownersTable(
      [owner('w2', 'default', 3, 100), owner('w1', 'default', 1, 50.5), owner('r1', 'readers', 7, 0)],
      3_500,
    );
    expect(lines[0]).toBe('group default (2 owners)');
    expect(lines[1]).toMatch(/^INSTANCE\s+ROLE\s+ADDRESS\s+TOPICS\s+MSG\/S IN/);
    expect(lines[2]).toMatch(/^w1\s+writer\s+w1:6650\s+1\s+50\.5\s+0\.0\s+0\.0\s+0\.0\s+0\s+2\s+50%\s+2\.5 s ago$/);
    expect(lines[3]).toMatch(/^w2\s+writer\s+w2:6650\s+3\s+100\.0\s/);
    expect(lines[4]).toMatch(/^total\s+4\s+150\.5\s+0\.0\s+0\.0\s+0\.0\s+0\s+100%$/);
    expect(lines[6]).toBe('group readers (1 owner)');
  });

  describe('against a running standalone', () => {
    let dir: string;
    let standalone: RunningStandalone | undefined;
    let url: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'ledgerline-owners-'));
      standalone = await startTestStandalone(join(dir, 'data'), 'warn');
      url = `127.0.0.1:${standalone.grpcPort}`;
    });
    afterAll(async () => {
      await standalone?.shutdown('tests done');
      rmSync(dir, { recursive: true, force: true });
    });

    it('lists the writer and read-only owners with the load of their last keep-alive', async () => {
      // The first keep-alive, a third of the default 10 s TTL after registration, carries the first load.
      let owners: { instanceId: string; role: string; group: string; load?: { cpuShare: number } }[] = [];
      await eventually(
        async () => {
          const run = await ledgerline('--url', url, 'owners', 'list', '--json');
          expect(run).toMatchObject({ code: 0, stderr: '' });
          owners = JSON.parse(run.stdout);
          return owners.length === 2 && owners.every((each) => each.load !== undefined);
        },
        { attempts: 100, intervalMs: 200, description: 'both owners reporting a load' },
      );
      expect(owners.map((each) => each.role).sort()).toEqual(['readonly', 'writer']);
      expect(owners.every((each) => each.load!.cpuShare >= 0)).toBe(true);
      const text = await ledgerline('--url', url, 'owners', 'list', '--role', 'writer');
      expect(text.code).toBe(0);
      const writer = owners.find((each) => each.role === 'writer')!;
      expect(text.stdout).toContain(`group ${writer.group} (1 owner)`);
      expect(text.stdout).toMatch(new RegExp(`^${writer.instanceId.replace(/[.]/g, '\\.')}\\s+writer\\s`, 'm'));
      expect(text.stdout).not.toContain('readonly');
    }, 60_000);

    it('refuses a role that is neither writer nor readonly', async () => {
      const run = await ledgerline('--url', url, 'owners', 'list', '--role', 'broker');
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('broker');
    });
  });
});
