import { AdminService, LookupService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client } from '@ledgerline/rpc';

/** The metadata service address admin commands use unless --url says otherwise. */
export const DEFAULT_URL = process.env['LEDGERLINE_URL'] ?? 'localhost:6650';

/** How long one admin call may take before it fails with DEADLINE_EXCEEDED. */
export const CALL_DEADLINE_MS = 30_000;

export interface AdminConnection {
  readonly url: string;
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  close(): void;
}

/** Accepts `host:port` or `grpc://host:port` / `http://host:port`, as users tend to write either. */
export function normaliseUrl(url: string): string {
  return url.replace(/^(grpc|http|ledgerline):\/\//, '').replace(/\/+$/, '');
}

export function connectAdmin(url: string): AdminConnection {
  const target = normaliseUrl(url);
  const channel = createChannel(target);
  const options = { defaultDeadlineMs: CALL_DEADLINE_MS };
  const admin = createClient(AdminService, channel, options);
  const lookup = createClient(LookupService, channel, options);
  return {
    url: target,
    admin,
    lookup,
    close() {
      closeClient(admin);
      closeClient(lookup);
      channel.close();
    },
  };
}
