import { serviceConfigSchema } from '@ledgerline/service-kit';
import { z } from 'zod';

const address = z.string().regex(/^[^\s/]+:\d{1,5}$/, 'must be host:port');

/** The console's own settings, shared by its app and by standalone. */
export const consoleSettings = {
  /** The HTTP port browsers open (the API and the front-end on one port). */
  consolePort: z.number().int().min(0).max(65_535).default(8080),
  /** The interface it listens on. */
  consoleHost: z.string().min(1).default('0.0.0.0'),
  /** The built front-end: index.html and its assets (`npx nx run @ledgerline/console-app:build` writes it). */
  consoleWebRoot: z.string().min(1).default('dist/apps/console-web'),
  /** Deadline of each call the console makes to a service, in ms. */
  consoleCallDeadlineMs: z.number().int().min(100).max(120_000).default(10_000),
};

/** The console app in a cluster: where the services are, and the usual service settings (auth, TLS, logs). */
export const clusterConsoleConfigSchema = serviceConfigSchema.extend({
  ...consoleSettings,
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: address,
  /** host:port of the garbage collector's gRPC service (LEDGERLINE_COLLECTOR_ADDRESS); its page is off without it. */
  collectorAddress: address.optional(),
  /** host:port of a Kafka gateway's Kafka listener (LEDGERLINE_KAFKA_ADDRESS); the Kafka page is off without it. */
  kafkaAddress: address.optional(),
});

export type ClusterConsoleConfig = z.output<typeof clusterConsoleConfigSchema>;
