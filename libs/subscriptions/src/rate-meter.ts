import { RATE_WINDOW_MS } from './limits.js';

/** Messages and bytes per second over the last whole window of RATE_WINDOW_MS. */
export class RateMeter {
  private windowStartMs: number;
  private messages = 0;
  private bytes = 0;
  private lastMessages = 0;
  private lastBytes = 0;

  constructor(private readonly now: () => number) {
    this.windowStartMs = now();
  }

  record(messages: number, bytes: number): void {
    this.roll();
    this.messages += messages;
    this.bytes += bytes;
  }

  get messagesPerSecond(): number {
    this.roll();
    return (this.lastMessages * 1000) / RATE_WINDOW_MS;
  }

  get bytesPerSecond(): number {
    this.roll();
    return (this.lastBytes * 1000) / RATE_WINDOW_MS;
  }

  private roll(): void {
    const elapsed = this.now() - this.windowStartMs;
    if (elapsed < RATE_WINDOW_MS) return;
    // A window with no record in it between the last and now counts as zero.
    const justOneWindow = elapsed < 2 * RATE_WINDOW_MS;
    this.lastMessages = justOneWindow ? this.messages : 0;
    this.lastBytes = justOneWindow ? this.bytes : 0;
    this.messages = 0;
    this.bytes = 0;
    this.windowStartMs += elapsed - (elapsed % RATE_WINDOW_MS);
  }
}
