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

/** One health check of a service's gRPC port, bounded by `deadlineMs`. */
export function checkHealth(address: string, deadlineMs = 2_000): Promise<HealthStatus> {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as GrpcClient & {
    Check: HealthCheck;
  };
  return new Promise<HealthStatus>((resolve) =>
    client.Check({ service: '' }, { deadline: Date.now() + deadlineMs }, (error, response) =>
      resolve(error === null ? (response!.status as HealthStatus) : 'UNREACHABLE'),
    ),
  ).finally(() => client.close());
}
