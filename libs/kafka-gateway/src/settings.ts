import { DEFAULT_MAX_FRAME_SIZE_BYTES } from '@ledgerline/kafka-protocol';
import { z } from 'zod';

const KiB = 1024;
const MiB = 1024 * KiB;
const MINUTE_MS = 60_000;

/**
 * The Kafka gateway's settings, with units in their names. Standalone and the
 * cluster app share them (standalone's flags: --kafka-port and the rest).
 */
export const kafkaGatewaySettings = {
  /** Interface the Kafka listener binds. */
  kafkaHost: z.string().min(1).default('0.0.0.0'),
  /** The Kafka listener's port (Kafka's 9092); 0 picks a free port. */
  kafkaPort: z.number().int().min(0).max(65_535).default(9092),
  /** host[:port] Kafka clients are told to reach this gateway at (Metadata, FindCoordinator); empty: localhost and the bound port. */
  kafkaAdvertisedAddress: z.string().max(256).default(''),
  /** This gateway's broker id in Metadata answers; 0: one derived from its advertised address (what a Deployment's pods use). */
  kafkaNodeId: z.number().int().min(0).max(2_147_483_647).default(1),
  /** The tenant and namespace a plain Kafka topic name lives in (KoP's kafkaTenant / kafkaNamespace). */
  kafkaTenant: z.string().min(1).max(128).default('public'),
  kafkaNamespace: z.string().min(1).max(128).default('default'),
  /**
   * Create the tenant and namespace at start when missing (standalone; a cluster's admin usually does it), the
   * namespace with allowAutoTopicCreation = kafkaAutoCreateTopics.
   */
  kafkaCreateNamespace: z.boolean().default(true),
  /**
   * Create a topic a producer or a Metadata request names when it does not exist (Kafka's auto.create.topics.enable),
   * in a namespace whose policy allowAutoTopicCreation allows it; elsewhere the topic is UNKNOWN_TOPIC_OR_PARTITION.
   */
  kafkaAutoCreateTopics: z.boolean().default(true),
  /** Partitions of an auto-created topic, and of CreateTopics with num_partitions -1 (Kafka's num.partitions). */
  kafkaDefaultPartitions: z.number().int().min(1).max(10_000).default(1),
  /** Largest request frame accepted; a larger one closes the connection (Kafka's socket.request.max.bytes). */
  kafkaMaxFrameSizeBytes: z
    .number()
    .int()
    .min(64 * KiB)
    .max(256 * MiB)
    .default(DEFAULT_MAX_FRAME_SIZE_BYTES),
  /** Bytes of answers queued for one connection; past it the gateway stops reading that connection's requests. */
  kafkaMaxOutputBufferBytes: z
    .number()
    .int()
    .min(64 * KiB)
    .max(1024 * MiB)
    .default(32 * MiB),
  /**
   * Requests of one connection being handled at once, answered in order. Java clients pipeline up to 5, but kafkajs
   * and librdkafka send each produce call as its own request without a bound: under 16 a burst waited for answers
   * to earlier requests before it was even read (p99 5 to 23 ms at 1,000 sends a second), so the default leaves room.
   */
  kafkaMaxInFlightRequests: z.number().int().min(1).max(1_000).default(128),
  /**
   * Bytes of request frames of one connection being handled at once; past it the next request waits for answers
   * (one request always may start, up to kafkaMaxFrameSizeBytes), so many large requests in flight stay bounded.
   */
  kafkaMaxInFlightRequestBytes: z
    .number()
    .int()
    .min(64 * KiB)
    .max(1024 * MiB)
    .default(64 * MiB),
  /**
   * Largest record batch a Produce may carry, as sent (compressed records included), as Kafka's message.max.bytes
   * (whose default this is); a larger one is MESSAGE_TOO_LARGE for its partition. The gateway serves at most
   * MAX_STORED_ENTRY_HEADROOM_BYTES below the gRPC message size it was given (which is the writer owner's
   * maxMessageSizeBytes in standalone), so that what it accepts the owner stores: DescribeConfigs answers the limit
   * in force.
   */
  kafkaMaxMessageBytes: z
    .number()
    .int()
    .min(1 * KiB)
    .max(64 * MiB)
    .default(1_048_588),
  /** Largest Fetch answer, whatever max_bytes asks (the first batch is always sent, as KIP-74 requires). */
  kafkaMaxFetchResponseBytes: z
    .number()
    .int()
    .min(64 * KiB)
    .max(256 * MiB)
    .default(8 * MiB),
  /**
   * PEM certificate chain the Kafka listener presents; with kafkaTlsKeyFile (both or neither) the listener speaks
   * TLS from the first byte (a Kafka SSL listener). Hosts default both to the service's tlsCert and tlsKey.
   */
  kafkaTlsCertFile: z.string().min(1).optional(),
  /** PEM private key of kafkaTlsCertFile. */
  kafkaTlsKeyFile: z.string().min(1).optional(),
  /** PEM CA bundle Kafka client certificates are checked against (hosts default it to the service's tlsCa). */
  kafkaTlsCaFile: z.string().min(1).optional(),
  /** Refuse, at the handshake, a Kafka client without a certificate from kafkaTlsCaFile (Kafka's ssl.client.auth=required). */
  kafkaTlsRequireClientCert: z.boolean().default(false),
  /** Kafka connections open at once; more are closed as they arrive. */
  kafkaMaxConnections: z.number().int().min(1).max(100_000).default(10_000),
  /** A connection silent this long is closed (Kafka's connections.max.idle.ms). */
  kafkaConnectionIdleMs: z
    .number()
    .int()
    .min(1_000)
    .max(60 * MINUTE_MS)
    .default(10 * MINUTE_MS),
  /** Longest a Fetch waits for min_bytes, whatever max_wait_ms asks. */
  kafkaMaxFetchWaitMs: z.number().int().min(0).max(MINUTE_MS).default(30_000),
  /**
   * Longest metadata string an OffsetCommit may keep with an offset (Kafka's offset.metadata.max.bytes, which Kafka
   * compares with the string's length in UTF-16 code units, as this does); a longer one is refused with
   * OFFSET_METADATA_TOO_LARGE. At most the writer owner's bound on a string cursor property (16384).
   */
  kafkaOffsetMetadataMaxLength: z.number().int().min(0).max(16_384).default(4_096),
  /**
   * Partitions a group's index of commits holds in one namespace (group-index.ts), at most the metadata service's
   * 10,000; a group committing on more is marked unindexed, and DeleteGroups and OffsetDelete find its commits by
   * reading every topic of the Kafka namespace.
   */
  kafkaMaxIndexedPartitionsPerGroup: z.number().int().min(1).max(10_000).default(10_000),
  /**
   * Entries one partition fetch reads at most. The writer owner bounds a fetch too (its maxFetchEntries, 1,000 by
   * default), so at this default the client's partition max bytes decide how much a catch-up fetch brings: a
   * backlog of one small record per entry (100 B, librdkafka's 0038) took twice the round trips at 500.
   */
  kafkaMaxFetchEntries: z.number().int().min(1).max(10_000).default(1_000),
  /** Bound on every call to the metadata service and the owners. */
  kafkaBackendTimeoutMs: z.number().int().min(100).max(MINUTE_MS).default(10_000),
  /** Session timeouts a consumer group member may ask for (Kafka's group.min/max.session.timeout.ms). */
  groupMinSessionTimeoutMs: z.number().int().min(1).max(MINUTE_MS).default(6_000),
  groupMaxSessionTimeoutMs: z
    .number()
    .int()
    .min(1)
    .max(60 * MINUTE_MS)
    .default(30 * MINUTE_MS),
  /** How long the first rebalance of an empty group waits for more members (Kafka's group.initial.rebalance.delay.ms). */
  groupInitialRebalanceDelayMs: z.number().int().min(0).max(MINUTE_MS).default(3_000),
  /** Consumer groups one gateway coordinates, and members per group. */
  maxGroups: z.number().int().min(1).max(1_000_000).default(10_000),
  maxGroupMembers: z.number().int().min(1).max(10_000).default(1_000),
};

const kafkaGatewaySettingsSchema = z.object(kafkaGatewaySettings);
export type KafkaGatewaySettings = z.output<typeof kafkaGatewaySettingsSchema>;

/** Settings with every default: for tests and for hosts that set only a few. */
export function resolveKafkaGatewaySettings(overrides: Partial<KafkaGatewaySettings> = {}): KafkaGatewaySettings {
  return kafkaGatewaySettingsSchema.parse(overrides);
}

/** Room kept between message.max.bytes and the entry the owner stores: its metadata, the gRPC request's framing. */
export const MAX_STORED_ENTRY_HEADROOM_BYTES = 64 * KiB;
/** grpc-js's and the services' default message size, for hosts that give none. */
const DEFAULT_GRPC_MESSAGE_BYTES = 4 * MiB;

/**
 * The message.max.bytes the gateway serves: kafkaMaxMessageBytes, or less when the gRPC message size (the largest
 * Publish the owner reads; in standalone also the owner's largest entry) would not hold a batch that large.
 */
export function effectiveMaxMessageBytes(settings: KafkaGatewaySettings, grpcMessageBytes: number | undefined): number {
  const ceiling = (grpcMessageBytes ?? DEFAULT_GRPC_MESSAGE_BYTES) - MAX_STORED_ENTRY_HEADROOM_BYTES;
  return Math.max(1, Math.min(settings.kafkaMaxMessageBytes, ceiling));
}
