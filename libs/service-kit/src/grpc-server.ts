import type { DescService } from '@bufbuild/protobuf';
import { ServerCredentials, type Server } from '@grpc/grpc-js';
import {
  bindAddress,
  bindServer,
  createGrpcServer,
  createInProcessClient,
  RpcReason,
  type Client,
  registerService,
  type GrpcLimits,
  type RegisterServiceOptions,
  type ServiceImpl,
} from '@ledgerline/rpc';
import { LedgerlineError } from '@ledgerline/errors';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { createReflection } from './reflection.js';

/** One service and its handlers, type-checked together by grpcService(). */
export interface GrpcServiceRegistration {
  readonly service: DescService;
  readonly impl: object;
}

/** Pairs a service with its handlers, checking the handlers against the descriptor. */
export function grpcService<S extends DescService>(service: S, impl: ServiceImpl<S>): GrpcServiceRegistration {
  return { service, impl };
}

export interface StartGrpcServerOptions extends GrpcLimits, RegisterServiceOptions {
  /** Defaults to 0.0.0.0. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  services: readonly GrpcServiceRegistration[];
  /** TLS (and, with a CA, mutual TLS) credentials; plaintext when absent. */
  credentials?: ServerCredentials;
}

export interface ShutdownOutcome {
  /** True when the drain bound was reached and whatever was still open was closed. */
  forced: boolean;
  /**
   * Calls of the registered services cancelled at the bound, as `<gRPC path> x<count>`. Empty when
   * the bound only closed connections without such calls (a health Watch, which never ends on its
   * own, or a connection accepted as shutdown began, which grpc-js also waits for).
   */
  cancelledCalls: string[];
}

export interface RunningGrpcServer {
  readonly server: Server;
  readonly port: number;
  readonly health: HealthImplementation;
  /** Sets grpc.health.v1 for the whole server ('') and for every registered service. */
  setServing(serving: boolean): void;
  /**
   * Sends every open connection GOAWAY (cut after `graceMs`) and keeps
   * listening: clients reconnect, through a Service to whichever replica is
   * ready, instead of staying pinned to this one.
   */
  closeConnections(graceMs: number): void;
  /** Aborted when the graceful shutdown begins. */
  readonly draining: AbortSignal;
  /**
   * A client of one of this server's services whose calls run in this process
   * through the hooks every call over the network goes through (authorization,
   * in-flight tracking for the drain, metrics), for another service hosted in
   * the same process. Refused (INTERNAL / HANDLER_MISSING) for a service this
   * server does not serve.
   */
  inProcessClient<S extends DescService>(service: S): Client<S>;
  /**
   * Marks the server NOT_SERVING, ends the watches (CallContext.draining),
   * stops accepting calls, waits up to drainTimeoutMs for in-flight calls to
   * finish, then cancels what is left.
   */
  shutdown(drainTimeoutMs: number): Promise<ShutdownOutcome>;
}

/**
 * Starts a gRPC server with the given services, grpc.health.v1 (SERVING once
 * bound) and server reflection listing them.
 */
export async function startGrpcServer(options: StartGrpcServerOptions): Promise<RunningGrpcServer> {
  const server = createGrpcServer(options);
  const names = ['', ...options.services.map((s) => s.service.typeName)];
  const health = new HealthImplementation(Object.fromEntries(names.map((name) => [name, 'NOT_SERVING'])));
  const inFlight = new InFlightCalls();
  const draining = new AbortController();
  const hooks: RegisterServiceOptions = {
    ...options,
    draining: draining.signal,
    onCallStart: (method) => {
      inFlight.started(method);
      options.onCallStart?.(method);
    },
    onCallEnd: (info) => {
      inFlight.ended(info.method);
      options.onCallEnd?.(info);
    },
  };
  for (const { service, impl } of options.services) {
    registerService(server, service, impl as ServiceImpl<DescService>, hooks);
  }
  health.addToServer(server);
  createReflection(options.services.map((s) => s.service)).addToServer(server);
  const credentials = options.credentials ?? ServerCredentials.createInsecure();
  const host = options.host ?? '0.0.0.0';
  const port = await bindServer(server, host, options.port, credentials);
  const setServing = (serving: boolean): void => {
    const status: ServingStatus = serving ? 'SERVING' : 'NOT_SERVING';
    for (const name of names) health.setStatus(name, status);
  };
  setServing(true);
  return {
    server,
    port,
    health,
    setServing,
    // grpc-js names a bound port by the address it was bound with.
    closeConnections: (graceMs) => server.drain(bindAddress(host, options.port), graceMs),
    draining: draining.signal,
    inProcessClient: (service) => {
      const registered = options.services.find((each) => each.service.typeName === service.typeName);
      if (registered === undefined) {
        throw new LedgerlineError(
          'INTERNAL',
          RpcReason.HANDLER_MISSING,
          `this server does not serve ${service.typeName}, so it has no in-process client for it`,
        );
      }
      return createInProcessClient(service, registered.impl as ServiceImpl<typeof service>, hooks);
    },
    shutdown: (drainTimeoutMs) => {
      // Watches end at once (CallContext.draining), so the drain waits only for calls that finish.
      draining.abort();
      return drain(server, setServing, drainTimeoutMs, inFlight);
    },
  };
}

/** The calls of our services that reached a handler and have not ended, by gRPC path. */
class InFlightCalls {
  private readonly counts = new Map<string, number>();

  started(method: string): void {
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
  }

  ended(method: string): void {
    const left = (this.counts.get(method) ?? 0) - 1;
    if (left > 0) this.counts.set(method, left);
    else this.counts.delete(method);
  }

  list(): string[] {
    return [...this.counts].map(([method, count]) => `${method} x${count}`);
  }
}

async function drain(
  server: Server,
  setServing: (serving: boolean) => void,
  drainTimeoutMs: number,
  inFlight: InFlightCalls,
): Promise<ShutdownOutcome> {
  setServing(false);
  let timer: NodeJS.Timeout | undefined;
  const drained = new Promise<boolean>((resolve) => server.tryShutdown(() => resolve(true)));
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), drainTimeoutMs);
  });
  const clean = await Promise.race([drained, timedOut]);
  clearTimeout(timer);
  if (clean) return { forced: false, cancelledCalls: [] };
  const cancelledCalls = inFlight.list();
  server.forceShutdown();
  await drained;
  return { forced: true, cancelledCalls };
}
