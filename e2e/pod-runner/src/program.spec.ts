import { pods } from './testing/run-pods.js';

// The pod runner's command line itself: its commands, and what it refuses before any runs.
describe('npm run pods', () => {
  it('lists its commands and the exit status in its help', async () => {
    const help = await pods('--help');
    expect(help.code).toBe(0);
    for (const command of ['up', 'down', 'pods', 'scale', 'delete-pod', 'drain', 'rollout', 'partition', 'heal'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    expect(help.stdout).toContain('Exit status: 0 done, 1 failed, 2 bad command line.');
  });

  it('takes up only with an overlay, refusing it as a bad command line', async () => {
    const refused = await pods('up');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("required option '--from-manifests <overlay>' not specified");
  });

  it('refuses an unknown command as a bad command line', async () => {
    const refused = await pods('apply', '-k', 'deploy/overlays/dev');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("unknown command 'apply'");
  });
});
