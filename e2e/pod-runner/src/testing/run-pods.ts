import type { CliIo } from '../cli-io.js';
import { runPodsCli } from '../program.js';

export interface PodsRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run pods -- <args>` in this process, with stdout and stderr captured as a process would write them. */
export async function pods(...args: string[]): Promise<PodsRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
  };
  const code = await runPodsCli(io, ['node', 'pods', ...args]);
  return { code, stdout, stderr };
}
