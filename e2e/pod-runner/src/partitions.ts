import { LedgerlineError } from '@ledgerline/errors';
import { selects, type Manifests } from './manifests.js';
import { addBlackhole } from './network.js';
import type { Pod } from './pod.js';
import { PodRunnerReason } from './reasons.js';
import type { ServiceProxy } from './service-proxy.js';

/** What a partition needs of the runner: the Services of its manifests and its pods. */
export interface PartitionedRunner {
  readonly manifests: Pick<Manifests, 'services'>;
  readonly pods: ReadonlyMap<string, Pod>;
  pod(name: string): Pod;
}

/** A blackhole route the runner added, to take out on heal. */
export interface Cut {
  netns: string;
  address: string;
}

/**
 * The routes that cut `pod` off from `names`. A pod name cuts both ways
 * between the two pods' addresses. A Service name cuts every pod it selects
 * the same way, and its cluster IP inside `pod`'s namespace too, so that
 * neither new nor open connections through the Service's proxy get through.
 * (Traffic to a pod through a Service proxy comes from the node's address,
 * so cutting a pod by its name alone leaves that path open: name the Service.)
 */
export function cutsFor(
  runner: PartitionedRunner,
  pod: Pod,
  names: readonly string[],
  proxies: ReadonlyMap<string, ServiceProxy>,
): Cut[] {
  const cuts: Cut[] = [];
  for (const name of names) {
    const service = runner.manifests.services.find((candidate) => candidate.metadata.name === name);
    const others =
      service === undefined
        ? [runner.pod(name)]
        : [...runner.pods.values()].filter(
            (other) => !other.terminating && selects(service.spec.selector, other.plan.labels),
          );
    if (service === undefined && others.length === 0) {
      throw new LedgerlineError('NOT_FOUND', PodRunnerReason.NO_SUCH_OBJECT, `no pod or Service ${name}`);
    }
    const clusterIP = proxies.get(name)?.clusterIP;
    if (clusterIP !== undefined) cuts.push({ netns: pod.plan.netns, address: clusterIP });
    for (const other of others) {
      if (other === pod) continue;
      cuts.push({ netns: pod.plan.netns, address: other.ip }, { netns: other.plan.netns, address: pod.ip });
    }
  }
  return cuts;
}

/** Adds the routes of cutsFor and returns them. */
export async function cutOff(
  runner: PartitionedRunner,
  pod: Pod,
  names: readonly string[],
  proxies: ReadonlyMap<string, ServiceProxy>,
): Promise<Cut[]> {
  const cuts = cutsFor(runner, pod, names, proxies);
  for (const cut of cuts) await addBlackhole(cut.netns, cut.address);
  return cuts;
}
