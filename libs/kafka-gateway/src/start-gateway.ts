import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelSettings } from '@ledgerline/rpc';
import type { Logger } from '@ledgerline/service-kit';
import { GatewayContext, type TokenCheck } from './gateway-context.js';
import { advertisedBroker, KafkaGatewayServer } from './gateway-server.js';
import { RegisteredPeers } from './gateway-peers.js';
import { GroupCoordinator } from './group-coordinator.js';
import { LedgerlineBackend } from './ledgerline-backend.js';
import { ensureKafkaNamespace } from './kafka-namespace.js';
import { openListenerTls } from './listener-tls.js';
import { OwnerRouter, type LocalOwner } from './owner-router.js';
import { effectiveMaxMessageBytes, type KafkaGatewaySettings } from './settings.js';
import { TopicNames } from './topic-names.js';

/** How long the start waits for the Kafka namespace before it listens anyway. */
const NAMESPACE_WAIT_MS = 5_000;
/** The services' own default (tlsReloadIntervalMs). */
const DEFAULT_TLS_RELOAD_INTERVAL_MS = 5_000;

/** A wait that does not hold the process open. */
const delay = (ms: number): Promise<void> => sleep(ms, undefined, { ref: false });

export interface KafkaGatewayOptions {
  settings: KafkaGatewaySettings;
  /** host:port of the metadata service (lookup and admin). */
  metadataAddress: string;
  /** Channel settings for the metadata service and the owners (TLS, this service's certificate). */
  channelSettings?: ChannelSettings;
  logger: Logger;
  /**
   * Checks the tokens Kafka clients log in with (a TokenVerifier). Given, the
   * gateway requires SASL: before a successful SaslAuthenticate a connection
   * may send only ApiVersions, SaslHandshake and SaslAuthenticate. Hosts pass
   * one exactly when the services require tokens (authEnabled).
   */
  tokenVerifier?: TokenCheck;
  /** How often the Kafka listener's TLS files are read again (the host's tlsReloadIntervalMs). */
  tlsReloadIntervalMs?: number;
  /**
   * Register with the metadata service so that gateways find each other
   * (the cluster app): group coordinators spread over the live gateways and
   * Metadata names them all. Without it the gateway is alone (standalone).
   */
  registration?: GatewayRegistration;
  /** An owner in this process whose TopicsService the gateway calls in process (standalone). */
  localOwner?: LocalOwner;
}

export interface GatewayRegistration {
  /** The owner group gateways register in. */
  group: string;
  /** The session's TTL: how long a gateway that died keeps coordinating its groups. */
  ttlMs: number;
  /** How often the live gateways are listed. */
  refreshMs: number;
  /**
   * How long a stopping gateway keeps answering, once it has handed its clients to the other gateways, before it
   * closes their connections (0: it closes them at once).
   */
  leaveMs: number;
}

export interface RunningKafkaGateway {
  /** The port the Kafka listener is bound to. */
  readonly port: number;
  readonly server: KafkaGatewayServer;
  readonly groups: GroupCoordinator;
  close(): Promise<void>;
}

/**
 * This gateway's registration, serving as its context's peers; groups another
 * gateway coordinates after a change are let go, so their members find it at once.
 */
function registeredPeers(
  registration: GatewayRegistration,
  router: OwnerRouter,
  context: GatewayContext,
  logger: Logger,
): RegisteredPeers {
  const peers = new RegisteredPeers({
    ...registration,
    clients: { lookup: router.lookup, admin: router.admin },
    self: () => context.broker(),
    logger,
    onChange: () => {
      const released = context.groups.release((groupId) => context.coordinates(groupId));
      // The new coordinator may delete their entries: this gateway must write them again if the groups come back.
      context.groupIndex.release((groupId) => context.coordinates(groupId));
      if (released > 0) logger.info({ released }, 'consumer groups moved to other gateways');
    },
  });
  context.peers = peers;
  return peers;
}

/**
 * With other gateways live, sends this one's clients to them and answers for a while longer (GatewayContext.leave):
 * clients told to go elsewhere while it still answers move at once, where a closed port left kafkajs retrying it
 * until its retries ran out (bench/kafka-group-handover.ts).
 */
async function leaveFirst(
  context: GatewayContext,
  server: KafkaGatewayServer,
  registration: GatewayRegistration | undefined,
  logger: Logger,
): Promise<void> {
  if (registration === undefined || registration.leaveMs <= 0 || !(await context.leave())) return;
  logger.info({ waitMs: registration.leaveMs }, 'kafka gateway leaving: clients sent to the others');
  await server.idle(registration.leaveMs);
}

/**
 * Starts the Kafka listener: what the cluster app and standalone both host.
 * With kafkaCreateNamespace, the home tenant and namespace are created when
 * missing (kafka-namespace.ts: in the background, waiting for a metadata
 * service still starting; a refusal is logged, not fatal: an admin may have
 * restricted it; a namespace that exists keeps its policies).
 */
export async function startKafkaGateway(options: KafkaGatewayOptions): Promise<RunningKafkaGateway> {
  const { settings, logger } = options;
  // First: bad TLS files or settings fail the start before anything else is opened.
  const tls = openListenerTls(settings, options.tlsReloadIntervalMs ?? DEFAULT_TLS_RELOAD_INTERVAL_MS, logger);
  const router = new OwnerRouter(
    options.metadataAddress,
    options.channelSettings ?? {},
    settings.kafkaBackendTimeoutMs,
    options.localOwner,
  );
  const backend = new LedgerlineBackend(router);
  const groups = new GroupCoordinator(settings);
  const names = new TopicNames({ tenant: settings.kafkaTenant, namespace: settings.kafkaNamespace });
  let broker = advertisedBroker(
    settings.kafkaNodeId,
    settings.kafkaAdvertisedAddress,
    settings.kafkaHost,
    settings.kafkaPort,
  );
  const maxMessageBytes = effectiveMaxMessageBytes(settings, options.channelSettings?.maxMessageSizeBytes);
  if (maxMessageBytes < settings.kafkaMaxMessageBytes) {
    logger.warn(
      { kafkaMaxMessageBytes: settings.kafkaMaxMessageBytes, maxMessageBytes },
      'kafkaMaxMessageBytes is above what one gRPC message to the owners holds: message.max.bytes is lowered',
    );
  }
  const served = { ...settings, kafkaMaxMessageBytes: maxMessageBytes };
  const context = new GatewayContext(served, backend, names, groups, () => broker, logger, options.tokenVerifier);
  // Waited for a moment, so clients that connect at once find it; past that it goes on in the background
  // (a metadata service still starting) while the listener serves.
  const stopEnsuring = new AbortController();
  const ensured = settings.kafkaCreateNamespace
    ? ensureKafkaNamespace(backend, settings, logger, stopEnsuring.signal)
    : Promise.resolve(false);
  await Promise.race([ensured, delay(NAMESPACE_WAIT_MS)]);
  const server = new KafkaGatewayServer(context, tls);
  let port: number;
  try {
    port = await server.listen(settings.kafkaHost, settings.kafkaPort);
  } catch (error) {
    stopEnsuring.abort();
    tls?.files.close();
    router.close();
    throw error;
  }
  broker = advertisedBroker(settings.kafkaNodeId, settings.kafkaAdvertisedAddress, settings.kafkaHost, port);
  const registered =
    options.registration === undefined ? undefined : registeredPeers(options.registration, router, context, logger);
  registered?.start();
  logger.info(
    {
      port,
      namespace: names.namespace,
      advertised: `${broker.host}:${broker.port}`,
      tls: tls !== undefined,
      saslRequired: options.tokenVerifier !== undefined,
    },
    'kafka gateway listening',
  );
  return {
    port,
    server,
    groups,
    async close() {
      stopEnsuring.abort();
      await leaveFirst(context, server, options.registration, logger);
      groups.close();
      await server.close();
      // The session ends before the channel closes: the other gateways take this one's groups at once.
      await registered?.stop();
      router.close();
    },
  };
}
