import { readFileSync } from 'node:fs';
import { credentials } from '@grpc/grpc-js';
import {
  createDevCertificates,
  writeDevCertificates,
  type DevCertificateFiles,
} from '@ledgerline/security/dev-certificates';
import { LedgerlineError } from '@ledgerline/errors';
import { LookupService, type GetLeaseResponse } from '@ledgerline/proto';
import { closeClient, createClient, type ClientOptions } from '@ledgerline/rpc';
import { ClusterReason } from './reasons.js';
import { findRepositoryRoot, hasApp, launchApp } from './launcher.js';
import {
  startLocalNats,
  startLocalRedis,
  startLocalRedisCluster,
  type LocalRedisCluster,
  type LocalServer,
} from './local-servers.js';
import { freePort } from './ports.js';
import {
  CLUSTER_ROLES,
  READ_ONLY_GROUP,
  ROLE_SPECS,
  roleSpec,
  type ClusterRole,
  type InstanceContext,
} from './roles.js';
import { ServiceInstance } from './service-instance.js';
import type { ClusterDescription } from './cluster-description.js';
import type { ClusterTlsFiles } from './health.js';

/** Most instances of one service a local cluster starts (each is a Node process on this machine). */
export const MAX_INSTANCES_PER_ROLE = 16;
/** Most masters of a local Redis Cluster. */
export const MAX_REDIS_CLUSTER_MASTERS = 9;

export interface LocalClusterOptions {
  /** Instances per service; a service left out starts none. */
  counts: Partial<Record<ClusterRole, number>>;
  /** An existing Redis (or Redis Cluster node list); otherwise one is started. */
  redisUrl?: string;
  /** Start a Redis Cluster of this many masters instead of one redis-server (when redisUrl is not given). */
  redisClusterMasters?: number;
  /** The started redis-server(s) keep an append-only file fsynced per write (so they survive a kill -9). */
  redisAppendOnly?: boolean;
  /** An existing NATS; otherwise one is started. */
  natsUrl?: string;
  /** More LEDGERLINE_* settings per service (shorter leases in tests, ...). */
  settings?: Partial<Record<ClusterRole, Record<string, string>>>;
  logLevel?: string;
  /** The checkout whose apps run; found from this file's folder by default. */
  root?: string;
  /** Bound on one service becoming healthy, in ms. */
  startTimeoutMs?: number;
  /** Picks a free loopback port (default: the kernel's choice); tests replace it to hand out a taken one. */
  freePort?: () => Promise<number>;
  /** Bound on one service's graceful stop before it is killed, in ms. */
  stopTimeoutMs?: number;
  /**
   * Serve TLS with mutual TLS between the services: a development CA and a
   * certificate per service and for a client are written into `dir`.
   */
  tls?: { dir: string };
}

/** Starts of one instance on fresh ports when the ones picked were taken before it bound them. */
const MAX_PORT_ATTEMPTS = 3;
const DEFAULT_START_TIMEOUT_MS = 120_000;
const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/**
 * A cluster on this machine: redis-server (one, or a Redis Cluster) and
 * nats-server unless URLs were given, then every service as its own process on
 * loopback. `ledgerline cluster up` and the multi-process tests both use it.
 */
export class LocalCluster {
  readonly instances: ServiceInstance[] = [];
  private readonly nextIndex = new Map<ClusterRole, number>();
  private readonly reservedPorts = new Set<number>();

  private constructor(
    readonly options: LocalClusterOptions,
    readonly root: string,
    readonly redisUrl: string,
    readonly natsUrl: string,
    readonly redis: LocalServer | undefined,
    readonly redisCluster: LocalRedisCluster | undefined,
    readonly nats: LocalServer | undefined,
    /** The development certificates when the cluster serves TLS. */
    readonly certificates: DevCertificateFiles | undefined,
  ) {}

  static async start(options: LocalClusterOptions): Promise<LocalCluster> {
    checkCounts(options);
    const root = options.root ?? findRepositoryRoot();
    for (const role of CLUSTER_ROLES) {
      if ((options.counts[role] ?? 0) > 0) launchApp(root, roleSpec(role).app);
    }
    let redis: LocalServer | undefined;
    let redisCluster: LocalRedisCluster | undefined;
    let nats: LocalServer | undefined;
    try {
      if (options.redisUrl === undefined && options.redisClusterMasters !== undefined)
        redisCluster = await startLocalRedisCluster(options.redisClusterMasters, options.redisAppendOnly);
      else if (options.redisUrl === undefined) redis = await startLocalRedis({ appendOnly: options.redisAppendOnly });
      if (options.natsUrl === undefined) nats = await startLocalNats();
    } catch (error) {
      await Promise.all([redis?.stop(), redisCluster?.stop(), nats?.stop()]);
      throw error;
    }
    const redisUrl = options.redisUrl ?? redisCluster?.url ?? `redis://127.0.0.1:${redis!.port}`;
    const natsUrl = options.natsUrl ?? `nats://127.0.0.1:${nats!.port}`;
    const certificates =
      options.tls === undefined
        ? undefined
        : await writeDevCertificates(options.tls.dir, await createDevCertificates());
    const cluster = new LocalCluster(options, root, redisUrl, natsUrl, redis, redisCluster, nats, certificates);
    try {
      // The metadata instances first: everyone else needs their addresses.
      for (const spec of ROLE_SPECS) {
        const count = options.counts[spec.role] ?? 0;
        await Promise.all(Array.from({ length: count }, () => cluster.add(spec.role)));
      }
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The started servers, for tests that kill and restart them. */
  get redisServers(): readonly LocalServer[] {
    return this.redisCluster?.nodes ?? (this.redis === undefined ? [] : [this.redis]);
  }

  byRole(role: ClusterRole): ServiceInstance[] {
    return this.instances.filter((instance) => instance.role === role);
  }

  instance(name: string): ServiceInstance {
    const found = this.instances.find((instance) => instance.name === name);
    if (found === undefined) throw new Error(`no instance named ${name}`);
    return found;
  }

  /** The running owner (writer, or read-only through their group) holding `topic`'s lease, as lookup answers. */
  async ownerOf(topic: string, role: 'writer-owner' | 'readonly-owner' = 'writer-owner'): Promise<ServiceInstance> {
    const lookup = createClient(LookupService, this.metadataTarget, this.clientOptions);
    try {
      const group = role === 'readonly-owner' ? READ_ONLY_GROUP : '';
      const { advertisedAddress } = await lookup.lookupTopic({ topic, group });
      const owner = this.instances.find((instance) => instance.running && instance.address === advertisedAddress);
      if (owner === undefined)
        throw new Error(`${topic} is owned at ${advertisedAddress}, which runs no instance of this cluster`);
      return owner;
    } finally {
      closeClient(lookup);
    }
  }

  /** The lease on `topic` as the metadata service holds it. */
  async lease(topic: string): Promise<GetLeaseResponse> {
    const lookup = createClient(LookupService, this.metadataTarget, this.clientOptions);
    try {
      return await lookup.getLease({ topic });
    } finally {
      closeClient(lookup);
    }
  }

  /** A grpc-js target listing every metadata instance: pick_first moves to the next when one dies. */
  get metadataTarget(): string {
    const addresses = this.byRole('metadata').map((instance) => instance.address);
    return addresses.length === 1 ? addresses[0]! : `ipv4:${addresses.join(',')}`;
  }

  /**
   * Starts one more instance of `role` and waits until it serves. `settings`
   * apply to this instance only, over the role's (a read-only owner in a group
   * of its own, or on a NATS of its own).
   */
  async add(role: ClusterRole, settings: Record<string, string> = {}): Promise<ServiceInstance> {
    const index = this.nextIndex.get(role) ?? 0;
    this.nextIndex.set(role, index + 1);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startInstance(role, index, settings);
      } catch (error) {
        // A port found free can be taken by another process before the service binds it (tests start
        // servers side by side): the instance is started again on other ports, a bounded number of times.
        if (attempt >= MAX_PORT_ATTEMPTS || !String(error).includes('EADDRINUSE')) throw error;
      }
    }
  }

  private async startInstance(
    role: ClusterRole,
    index: number,
    settings: Record<string, string>,
  ): Promise<ServiceInstance> {
    const spec = roleSpec(role);
    const [grpcPort, metricsPort] = [await this.unreservedPort(), await this.unreservedPort()];
    const kafkaPort = spec.servesKafka === true ? await this.unreservedPort() : undefined;
    const consolePort = spec.servesConsole === true ? await this.unreservedPort() : undefined;
    // Roles start in order, so the console (last) finds a collector and a gateway already running.
    const collectorAddress = this.byRole('garbage-collector')[0]?.address;
    const kafkaAddress = this.byRole('kafka-gateway')[0]?.kafkaAddress;
    const context: InstanceContext = {
      name: `${role}-${index}`,
      index,
      grpcPort,
      redisUrl: this.redisUrl,
      natsUrl: this.natsUrl,
      metadataTarget: this.metadataTarget,
      ...(kafkaPort === undefined ? {} : { kafkaPort }),
      ...(consolePort === undefined ? {} : { consolePort }),
      ...(collectorAddress === undefined ? {} : { collectorAddress }),
      ...(kafkaAddress === undefined ? {} : { kafkaAddress }),
    };
    const inherited = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(inherited),
      LEDGERLINE_GRPC_HOST: '127.0.0.1',
      LEDGERLINE_GRPC_PORT: String(grpcPort),
      LEDGERLINE_METRICS_HOST: '127.0.0.1',
      LEDGERLINE_METRICS_PORT: String(metricsPort),
      LEDGERLINE_LOG_LEVEL: this.options.logLevel ?? 'warn',
      ...spec.settings(context),
      ...this.tlsSettings(role),
      ...this.options.settings?.[role],
      ...settings,
    };
    const instance = new ServiceInstance(
      context.name,
      role,
      grpcPort,
      metricsPort,
      launchApp(this.root, spec.app),
      env,
      this.clientTls,
      kafkaPort,
      consolePort,
    );
    this.instances.push(instance);
    try {
      await instance.start(this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    } catch (error) {
      this.instances.splice(this.instances.indexOf(instance), 1);
      throw error;
    }
    return instance;
  }

  /**
   * A free port never handed to an instance of this cluster before: a stopped
   * instance may start again on its own, and two instances starting at once
   * must not pick the same one.
   */
  private async unreservedPort(): Promise<number> {
    for (;;) {
      const port = await (this.options.freePort ?? freePort)();
      if (this.reservedPorts.has(port) || this.redisServers.some((server) => server.port === port)) continue;
      if (this.nats?.port === port) continue;
      this.reservedPorts.add(port);
      return port;
    }
  }

  /**
   * Stops every service with SIGTERM, owners and collectors before the
   * metadata service (their drains still reach it), each bounded by
   * stopTimeoutMs and killed past it, then the servers this cluster started.
   */
  async stop(): Promise<void> {
    const timeoutMs = this.options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    for (const spec of [...ROLE_SPECS].reverse()) {
      await Promise.all(this.byRole(spec.role).map((instance) => instance.stop('SIGTERM', timeoutMs)));
    }
    await Promise.all([this.redis?.stop(), this.redisCluster?.stop(), this.nats?.stop()]);
  }

  /** The CA and the client certificate, when the cluster serves TLS. */
  get clientTls(): ClusterTlsFiles | undefined {
    const files = this.certificates;
    if (files === undefined) return undefined;
    const client = files.leaves['client']!;
    return { ca: files.caCert, cert: client.cert, key: client.key };
  }

  /** How this process calls the services: over TLS with the client certificate when the cluster serves TLS. */
  get clientOptions(): ClientOptions {
    const tls = this.clientTls;
    if (tls === undefined) return {};
    return {
      credentials: credentials.createSsl(readFileSync(tls.ca), readFileSync(tls.key), readFileSync(tls.cert)),
    };
  }

  /** A service's own certificate (its identity: the role's name) and the CA it trusts. */
  private tlsSettings(role: ClusterRole): Record<string, string> {
    const leaf = this.certificates?.leaves[role];
    if (leaf === undefined) return {};
    return {
      LEDGERLINE_TLS_CERT: leaf.cert,
      LEDGERLINE_TLS_KEY: leaf.key,
      LEDGERLINE_TLS_CA: this.certificates!.caCert,
    };
  }

  /** What `cluster status` needs to find and probe every process. */
  describe(): ClusterDescription {
    return {
      ...(this.clientTls === undefined ? {} : { tls: this.clientTls }),
      redisUrl: this.redisUrl,
      natsUrl: this.natsUrl,
      servers: [...this.redisServers, ...(this.nats === undefined ? [] : [this.nats])].map((server) => ({
        name: server.name,
        port: server.port,
        pid: server.pid ?? 0,
      })),
      processes: this.instances.map((instance) => ({
        name: instance.name,
        role: instance.role,
        pid: instance.pid ?? 0,
        address: instance.address,
        metricsAddress: `127.0.0.1:${instance.metricsPort}`,
      })),
    };
  }
}

function checkCounts(options: LocalClusterOptions): void {
  const bad = (message: string): LedgerlineError =>
    new LedgerlineError('INVALID_ARGUMENT', ClusterReason.BAD_CLUSTER_OPTION, message);
  for (const [role, count] of Object.entries(options.counts)) {
    if (!Number.isInteger(count) || count < 0 || count > MAX_INSTANCES_PER_ROLE)
      throw bad(
        `the number of ${role} instances must be a whole number from 0 to ${MAX_INSTANCES_PER_ROLE}, not ${count}`,
      );
  }
  const others = CLUSTER_ROLES.filter((role) => role !== 'metadata').some((role) => (options.counts[role] ?? 0) > 0);
  if (others && (options.counts.metadata ?? 0) === 0)
    throw bad('every other service reaches metadata through the metadata service: start at least one');
  const masters = options.redisClusterMasters;
  if (masters !== undefined && options.redisUrl !== undefined)
    throw bad('give either a Redis URL or a Redis Cluster size to start, not both');
  if (masters !== undefined && (!Number.isInteger(masters) || masters < 3 || masters > MAX_REDIS_CLUSTER_MASTERS))
    throw bad(`a Redis Cluster needs 3 to ${MAX_REDIS_CLUSTER_MASTERS} masters, not ${masters}`);
}

/** Whether this checkout can run `role` (the read-only owner may not be in every checkout yet). */
export function roleAvailable(role: ClusterRole, root: string = findRepositoryRoot()): boolean {
  return hasApp(root, roleSpec(role).app);
}
