/** How many of a run's last event lines are kept for a failure report. */
const KEPT_EVENTS = 200;

/**
 * The last lines a run logged (pods made, containers started, exited and
 * restarted, readiness turning), each with its time: the timeline a failing
 * spec prints, since a stall's cause is usually what changed just before it.
 */
export class RecentEvents {
  private readonly lines: string[] = [];

  constructor(private readonly sink: (line: string) => void = () => undefined) {}

  readonly log = (line: string): void => {
    this.lines.push(`${new Date().toISOString()} ${line}`);
    if (this.lines.length > KEPT_EVENTS) this.lines.shift();
    this.sink(line);
  };

  /** The kept lines, oldest first. */
  timeline(): readonly string[] {
    return [...this.lines];
  }
}
