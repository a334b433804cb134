/**
 * The services a cluster runs, in the order they start: the metadata service
 * first (everyone else reaches metadata through it), then the owners, the
 * collector, the Kafka gateway and the web console. Adding a service to `ledgerline cluster`,
 * the failure tests and the Kubernetes manifests' checks is one entry here.
 */
export const CLUSTER_ROLES = [
  'metadata',
  'writer-owner',
  'readonly-owner',
  'garbage-collector',
  'kafka-gateway',
  'console',
] as const;
export type ClusterRole = (typeof CLUSTER_ROLES)[number];

/** Where the shared servers are and how one instance is reached. */
export interface InstanceContext {
  /** A unique, stable name: `writer-owner-1`. */
  name: string;
  index: number;
  grpcPort: number;
  /** The Redis setting every service takes: one URL, or a Cluster's node list (see redisTarget). */
  redisUrl: string;
  natsUrl: string;
  /** grpc-js target listing every metadata instance, so a service carries on when one of them dies. */
  metadataTarget: string;
  /** The Kafka listener's port, for a role that serves Kafka. */
  kafkaPort?: number;
  /** The first Kafka gateway's Kafka listener and the first collector's gRPC address, for the console. */
  kafkaAddress?: string;
  collectorAddress?: string;
  /** The console's HTTP port, for the role that serves it. */
  consolePort?: number;
}

export interface RoleSpec {
  role: ClusterRole;
  /** The app under apps/ (and the APP of the image). */
  app: string;
  /** What `cluster up` calls the count flag (`--writers 3`). */
  countFlag: string;
  /** The LEDGERLINE_* settings of one instance beyond the ports every service takes. */
  settings(instance: InstanceContext): Record<string, string>;
  /**
   * The line the process prints once it is ready for work. An owner's health
   * answers SERVING while it still registers with the metadata service, so a
   * lookup made then cannot name it yet; this line comes after registering.
   */
  readyLine?: RegExp;
  /** The role serves the Kafka protocol on a port of its own besides gRPC. */
  servesKafka?: boolean;
  /** The role serves the web console over HTTP on a port of its own besides gRPC. */
  servesConsole?: boolean;
}

/** The owner group the cluster's read-only owners register in; reader namespaces name it. */
export const READ_ONLY_GROUP = 'readonly';

const ownerSettings = (instance: InstanceContext, group: string): Record<string, string> => ({
  LEDGERLINE_METADATA_ADDRESS: instance.metadataTarget,
  LEDGERLINE_REDIS_URL: instance.redisUrl,
  LEDGERLINE_NATS_URL: instance.natsUrl,
  LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${instance.grpcPort}`,
  LEDGERLINE_INSTANCE_ID: instance.name,
  LEDGERLINE_OWNER_GROUP: group,
});

export const ROLE_SPECS: readonly RoleSpec[] = [
  {
    role: 'metadata',
    app: 'metadata',
    countFlag: 'metadata',
    settings: (instance) => ({ LEDGERLINE_REDIS_URL: instance.redisUrl, LEDGERLINE_NATS_URL: instance.natsUrl }),
  },
  {
    role: 'writer-owner',
    app: 'writer-owner',
    countFlag: 'writers',
    settings: (instance) => ownerSettings(instance, 'default'),
    readyLine: /writer owner listening/,
  },
  {
    role: 'readonly-owner',
    app: 'readonly-owner',
    countFlag: 'readers',
    // Read-only owners register in a group of their own, which reader namespaces name (PIP-63).
    settings: (instance) => ownerSettings(instance, READ_ONLY_GROUP),
    readyLine: /read-only owner listening/,
  },
  {
    role: 'garbage-collector',
    app: 'garbage-collector',
    countFlag: 'collectors',
    settings: (instance) => ({
      LEDGERLINE_METADATA_ADDRESS: instance.metadataTarget,
      LEDGERLINE_LEDGER_REDIS_URL: instance.redisUrl,
      LEDGERLINE_NATS_URL: instance.natsUrl,
      LEDGERLINE_INSTANCE_ID: instance.name,
    }),
  },
  {
    role: 'kafka-gateway',
    app: 'kafka-gateway',
    countFlag: 'gateways',
    servesKafka: true,
    // Each gateway is a broker of its own to Kafka clients: its own id and address.
    settings: (instance) => ({
      LEDGERLINE_METADATA_ADDRESS: instance.metadataTarget,
      LEDGERLINE_KAFKA_HOST: '127.0.0.1',
      LEDGERLINE_KAFKA_PORT: String(instance.kafkaPort ?? 0),
      LEDGERLINE_KAFKA_ADVERTISED_ADDRESS: `127.0.0.1:${instance.kafkaPort ?? 0}`,
      LEDGERLINE_KAFKA_NODE_ID: String(instance.index + 1),
    }),
    readyLine: /kafka gateway listening/,
  },
  {
    role: 'console',
    app: 'console',
    countFlag: 'consoles',
    servesConsole: true,
    // The console calls the services as a browser's proxy: metadata, the collector, a Kafka gateway.
    settings: (instance) => ({
      LEDGERLINE_METADATA_ADDRESS: instance.metadataTarget,
      LEDGERLINE_CONSOLE_HOST: '127.0.0.1',
      LEDGERLINE_CONSOLE_PORT: String(instance.consolePort ?? 0),
      ...(instance.collectorAddress === undefined ? {} : { LEDGERLINE_COLLECTOR_ADDRESS: instance.collectorAddress }),
      ...(instance.kafkaAddress === undefined ? {} : { LEDGERLINE_KAFKA_ADDRESS: instance.kafkaAddress }),
    }),
    readyLine: /console listening/,
  },
];

export function roleSpec(role: ClusterRole): RoleSpec {
  return ROLE_SPECS.find((spec) => spec.role === role)!;
}
