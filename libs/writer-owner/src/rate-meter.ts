/**
 * Messages and bytes per second over the last window: the counters are
 * sampled at most once per window, and the rate is the change since the
 * previous sample. Cheap enough to bump on every message.
 */
export class RateMeter {
  messages = 0;
  bytes = 0;
  private sample = { atMs: 0, messages: 0, bytes: 0 };
  private rates = { messagesPerSecond: 0, bytesPerSecond: 0 };

  constructor(
    private readonly now: () => number,
    private readonly windowMs = 1_000,
  ) {
    this.sample.atMs = now();
  }

  record(messages: number, bytes: number): void {
    this.messages += messages;
    this.bytes += bytes;
  }

  read(): { messagesPerSecond: number; bytesPerSecond: number } {
    const now = this.now();
    const elapsedMs = now - this.sample.atMs;
    if (elapsedMs >= this.windowMs) {
      this.rates = {
        messagesPerSecond: ((this.messages - this.sample.messages) * 1000) / elapsedMs,
        bytesPerSecond: ((this.bytes - this.sample.bytes) * 1000) / elapsedMs,
      };
      this.sample = { atMs: now, messages: this.messages, bytes: this.bytes };
    }
    return this.rates;
  }
}
