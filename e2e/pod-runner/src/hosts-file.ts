import { selects, type Service } from './manifests.js';

/** What the hosts files are made of: each pod's name, address, labels, readiness and subdomain. */
export interface PodEndpoint {
  name: string;
  ip: string;
  labels: Record<string, string>;
  ready: boolean;
  /** Terminating pods leave every Service at once, ready or not. */
  terminating: boolean;
  /** A StatefulSet pod's governing Service: it is also `<pod>.<service>`. */
  subdomain?: string;
}

/** The Kubernetes namespace the names are qualified with (`svc.default.svc.cluster.local`). */
export const CLUSTER_NAMESPACE = 'default';

function qualified(name: string): string[] {
  return [
    name,
    `${name}.${CLUSTER_NAMESPACE}`,
    `${name}.${CLUSTER_NAMESPACE}.svc`,
    `${name}.${CLUSTER_NAMESPACE}.svc.cluster.local`,
  ];
}

/** The pods a Service's name resolves to: those it selects that are ready (or all, with publishNotReadyAddresses). */
export function serviceEndpoints(service: Service, pods: readonly PodEndpoint[]): PodEndpoint[] {
  return pods.filter(
    (pod) =>
      selects(service.spec.selector, pod.labels) &&
      !pod.terminating &&
      (pod.ready || service.spec.publishNotReadyAddresses === true),
  );
}

/**
 * The hosts file of one pod. A Service with a cluster IP (see
 * service-proxy.ts) resolves to it; a headless Service resolves to the
 * addresses of its ready pods, one line each, as cluster DNS answers, so a pod
 * that stops being ready leaves the name when the files are rewritten.
 * StatefulSet pods behind a headless Service are also `<pod>.<service>`.
 */
export function hostsFile(
  self: { name: string; ip: string },
  services: readonly Service[],
  pods: readonly PodEndpoint[],
  clusterIPs: ReadonlyMap<string, string> = new Map(),
): string {
  const lines = ['127.0.0.1 localhost', `${self.ip} ${self.name}`];
  for (const service of services) {
    const clusterIP = clusterIPs.get(service.metadata.name);
    if (clusterIP !== undefined) {
      lines.push(`${clusterIP} ${qualified(service.metadata.name).join(' ')}`);
      continue;
    }
    for (const pod of serviceEndpoints(service, pods))
      lines.push(`${pod.ip} ${qualified(service.metadata.name).join(' ')}`);
  }
  for (const pod of pods) {
    if (pod.subdomain !== undefined && !pod.terminating)
      lines.push(`${pod.ip} ${qualified(`${pod.name}.${pod.subdomain}`).join(' ')}`);
  }
  return `${lines.join('\n')}\n`;
}
