import { SingleBar, Presets } from 'cli-progress';

/** Where the CLI writes: results to stdout, progress and errors to stderr (so stdout stays parseable). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** A progress bar for bulk work, drawn only when stderr is a terminal. */
  progress(total: number, label: string): Progress;
}

export interface Progress {
  advance(by: number): void;
  stop(): void;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progress(total, label) {
    if (!process.stderr.isTTY) return { advance: () => {}, stop: () => {} };
    const bar = new SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`,
        stream: process.stderr,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0);
    return { advance: (by) => bar.increment(by), stop: () => bar.stop() };
  },
};
