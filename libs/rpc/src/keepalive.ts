import type { ChannelOptions } from '@grpc/grpc-js';
import { checkedInteger } from './server-options.js';

/*
 * HTTP/2 pings on every channel. A connection whose far end went silent
 * (a proxy or load balancer that lost its upstream, a peer whose host
 * vanished without a reset) still looks open to grpc-js: every call on it
 * waits out its deadline and the channel never dials again. A ping that
 * goes unanswered closes it, and the next call dials afresh.
 */

/** How often a channel pings its server, in ms, with calls open or not. */
export const DEFAULT_KEEPALIVE_TIME_MS = 10_000;
/** How long a ping may go unanswered before the connection is closed and dialled again. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 5_000;

export interface KeepaliveSettings {
  /** 0 turns pings off. */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
}

/** grpc-js channel options for the pings (grpc-js servers accept pings at any rate). */
export function keepaliveOptions(settings: KeepaliveSettings = {}): ChannelOptions {
  const timeMs = checkedInteger(settings.keepaliveTimeMs ?? DEFAULT_KEEPALIVE_TIME_MS, 'keepaliveTimeMs', 0);
  if (timeMs === 0) return {};
  return {
    'grpc.keepalive_time_ms': timeMs,
    'grpc.keepalive_timeout_ms': checkedInteger(
      settings.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS,
      'keepaliveTimeoutMs',
    ),
    'grpc.keepalive_permit_without_calls': 1,
  };
}
