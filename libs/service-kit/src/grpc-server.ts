import type { DescService } from '@bufbuild/protobuf';
import { ServerCredentials, type Server } from '@grpc/grpc-js';
import {
  bindServer,
  createGrpcServer,
  registerService,
  type GrpcLimits,
  type RegisterServiceOptions,
  type ServiceImpl,
} from '@ledgerline/rpc';
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
  /** True when in-flight calls outlived the drain bound and were cancelled. */
  forced: boolean;
}

export interface RunningGrpcServer {
  readonly server: Server;
  readonly port: number;
  readonly health: HealthImplementation;
  /** Sets grpc.health.v1 for the whole server ('') and for every registered service. */
  setServing(serving: boolean): void;
  /**
   * Marks the server NOT_SERVING, stops accepting calls, waits up to
   * drainTimeoutMs for in-flight calls to finish, then cancels what is left.
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
  for (const { service, impl } of options.services) {
    registerService(server, service, impl as ServiceImpl<DescService>, options);
  }
  health.addToServer(server);
  createReflection(options.services.map((s) => s.service)).addToServer(server);
  const credentials = options.credentials ?? ServerCredentials.createInsecure();
  const port = await bindServer(server, options.host ?? '0.0.0.0', options.port, credentials);
  const setServing = (serving: boolean): void => {
    const status: ServingStatus = serving ? 'SERVING' : 'NOT_SERVING';
    for (const name of names) health.setStatus(name, status);
  };
  setServing(true);
  return { server, port, health, setServing, shutdown: (drainTimeoutMs) => drain(server, setServing, drainTimeoutMs) };
}

async function drain(server: Server, setServing: (serving: boolean) => void, drainTimeoutMs: number) {
  setServing(false);
  let timer: NodeJS.Timeout | undefined;
  const drained = new Promise<boolean>((resolve) => server.tryShutdown(() => resolve(true)));
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), drainTimeoutMs);
  });
  const clean = await Promise.race([drained, timedOut]);
  clearTimeout(timer);
  if (!clean) {
    server.forceShutdown();
    await drained;
  }
  return { forced: !clean };
}
