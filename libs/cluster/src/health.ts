import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { credentials, makeGenericClientConstructor, type Client as GrpcClient, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const HealthClient = makeGenericClientConstructor(healthService, 'Health');
type HealthCheck = (
  request: { service: string },
  options: { deadline: number },
  callback: (error: ServiceError | null, response?: { status: string }) => void,
) => void;

/** What grpc.health.v1 said (SERVING, NOT_SERVING while draining), or UNREACHABLE when nothing answered. */
export type HealthStatus = 'SERVING' | 'NOT_SERVING' | 'UNKNOWN' | 'SERVICE_UNKNOWN' | 'UNREACHABLE';

/** PEM files of the CA to trust and the certificate to present, for a cluster that serves TLS. */
export interface ClusterTlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** Whether a TCP connection to `host`:`port` opens within `timeoutMs`; the socket is closed either way. */
export function tcpConnects(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const finish = (opened: boolean): void => {
      socket.destroy();
      resolve(opened);
    };
    socket.once('connect', () => finish(true));
    socket.once('timeout', () => finish(false));
    socket.once('error', () => finish(false));
  });
}

/** tcpConnects for an address `host:port` (an IPv6 host in brackets); false for one that is not. */
function tcpOpens(address: string, timeoutMs: number): Promise<boolean> {
  const parts = /^\[?(.+?)\]?:(\d{1,5})$/.exec(address);
  if (parts === null) return Promise.resolve(false);
  return tcpConnects(parts[1]!, Number(parts[2]), timeoutMs);
}

/**
 * One health check of a service's gRPC port (over TLS when given the files),
 * bounded by `deadlineMs`. The connection is tried first with a socket of our
 * own: grpc-js cannot stop a TCP connect under way when its channel closes, so
 * a check of an address that drops packets (a pod cut off, or just deleted)
 * would leave a socket connecting for as long as the kernel retries, minutes.
 */
export async function checkHealth(address: string, deadlineMs = 2_000, tls?: ClusterTlsFiles): Promise<HealthStatus> {
  const startedMs = Date.now();
  if (!(await tcpOpens(address, deadlineMs))) return 'UNREACHABLE';
  const remainingMs = deadlineMs - (Date.now() - startedMs);
  if (remainingMs <= 0) return 'UNREACHABLE';
  return grpcHealth(address, remainingMs, tls);
}

function grpcHealth(address: string, deadlineMs: number, tls: ClusterTlsFiles | undefined): Promise<HealthStatus> {
  const channel =
    tls === undefined
      ? credentials.createInsecure()
      : credentials.createSsl(readFileSync(tls.ca), readFileSync(tls.key), readFileSync(tls.cert));
  // The services listen on 127.0.0.1 and their certificates name localhost too: sending an IP as the TLS
  // server name is not allowed (RFC 6066) and makes Node warn on every check.
  const options = tls === undefined ? {} : { 'grpc.ssl_target_name_override': 'localhost' };
  const client = new HealthClient(address, channel, options) as unknown as GrpcClient & {
    Check: HealthCheck;
  };
  return new Promise<HealthStatus>((resolve) =>
    client.Check({ service: '' }, { deadline: Date.now() + deadlineMs }, (error, response) =>
      resolve(error === null ? (response!.status as HealthStatus) : 'UNREACHABLE'),
    ),
  ).finally(() => client.close());
}
