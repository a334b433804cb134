/**
 * The metadata service's settings in specs that watch the balancer settle a
 * group of owners: a round every second, two rounds out of balance before
 * shedding, the band at ±10% of the mean (the balancer's default), a short
 * cooldown, and traffic that never weighs as topics (the bound is on counts).
 */
export const QUICK_BALANCER_SETTINGS: Readonly<Record<string, string>> = {
  LEDGERLINE_BALANCER_INTERVAL_MS: '1000',
  LEDGERLINE_BALANCER_WINDOW_ROUNDS: '2',
  LEDGERLINE_BALANCER_THRESHOLD_PERCENT: '10',
  LEDGERLINE_BALANCER_TOPIC_COOLDOWN_MS: '5000',
  LEDGERLINE_BALANCER_MESSAGES_PER_TOPIC: '1000000000',
};
