import type { CliIo } from '../cli-io.js';
import { runCli } from '../program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `ledgerline <args>` in this process, with stdout and stderr captured as a process would write them. */
export async function ledgerline(...args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    progress: () => ({ advance: () => {}, stop: () => {} }),
  };
  const code = await runCli(io, ['node', 'ledgerline', ...args]);
  return { code, stdout, stderr };
}
