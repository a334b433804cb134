/** Trace lines kept; older ones are dropped. */
const MAX_TRACE_LINES = 5_000;

/**
 * An owner process the tests can kill. Every store call the process makes
 * goes through `run`: after `crash()` no call gets an answer any more, and a
 * call already sent still takes effect in the store but its answer is lost,
 * which is what a killed process leaves behind. Nothing is rejected, so the
 * dead process's code simply stops where it was.
 */
export class SimulatedProcess {
  private dead = false;

  /** `trace`, when given, collects one line per call and fault, for reading a failed history. */
  constructor(
    readonly name: string,
    private readonly trace?: string[],
  ) {}

  /** Notes what happened, when tracing. */
  note(line: string): void {
    if (this.trace === undefined) return;
    if (this.trace.length >= MAX_TRACE_LINES) this.trace.shift();
    this.trace.push(`${this.name}${this.dead ? ' (dead)' : ''}: ${line}`);
  }

  get crashed(): boolean {
    return this.dead;
  }

  crash(): void {
    this.note('crashed');
    this.dead = true;
  }

  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.dead) return never<T>();
    return new Promise<T>((resolve) => resolve(call())).then(
      (value) => (this.dead ? never<T>() : value),
      (err: unknown) => (this.dead ? never<T>() : Promise.reject(err)),
    );
  }
}

/** A promise that never settles: the answer a dead process never hears. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
