import { LedgerlineError } from '@ledgerline/errors';
import { parseManifests, type Manifests, type Workload } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

/** The overlay the runner runs when none is given. */
export const DEV_OVERLAY = 'deploy/overlays/dev';

/** A ConfigMap or Secret key (or a whole object, key '*') that a workload names. */
export interface ObjectReference {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  key: string;
  /** Who names it: `<workload>/<container>` or `<workload> volume <name>`. */
  by: string;
}

function referencesOf(workload: Workload): ObjectReference[] {
  const found: ObjectReference[] = [];
  const spec = workload.spec.template.spec;
  for (const container of spec.containers) {
    const by = `${workload.metadata.name}/${container.name}`;
    for (const variable of container.env ?? []) {
      const config = variable.valueFrom?.configMapKeyRef;
      const secret = variable.valueFrom?.secretKeyRef;
      if (config !== undefined && config.optional !== true)
        found.push({ kind: 'ConfigMap', name: config.name, key: config.key, by });
      if (secret !== undefined && secret.optional !== true)
        found.push({ kind: 'Secret', name: secret.name, key: secret.key, by });
    }
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef !== undefined && source.configMapRef.optional !== true)
        found.push({ kind: 'ConfigMap', name: source.configMapRef.name, key: '*', by });
      if (source.secretRef !== undefined && source.secretRef.optional !== true)
        found.push({ kind: 'Secret', name: source.secretRef.name, key: '*', by });
    }
  }
  for (const volume of spec.volumes ?? []) {
    const by = `${workload.metadata.name} volume ${volume.name}`;
    const secret = volume.secret as { secretName?: string; items?: { key: string }[]; optional?: boolean } | undefined;
    if (secret?.secretName !== undefined && secret.optional !== true) {
      for (const key of secret.items?.map((item) => item.key) ?? ['*'])
        found.push({ kind: 'Secret', name: secret.secretName, key, by });
    }
    const config = volume.configMap as { name?: string; items?: { key: string }[]; optional?: boolean } | undefined;
    if (config?.name !== undefined && config.optional !== true) {
      for (const key of config.items?.map((item) => item.key) ?? ['*'])
        found.push({ kind: 'ConfigMap', name: config.name, key, by });
    }
  }
  return found;
}

/**
 * What the overlay's workloads name but the overlay does not hold: Secrets
 * and ConfigMaps (or keys of them) that a cluster's operators provide, as
 * the prod overlay expects of its TLS and token Secrets. A pod naming one
 * would not start on Kubernetes either, so `pods up` refuses such an
 * overlay at once, listing them, instead of failing pod by pod.
 */
export function missingReferences(manifests: Manifests): ObjectReference[] {
  const missing = new Map<string, ObjectReference>();
  for (const workload of manifests.workloads) {
    for (const reference of referencesOf(workload)) {
      const held = (reference.kind === 'Secret' ? manifests.secrets : manifests.configMaps).get(reference.name);
      if (held !== undefined && (reference.key === '*' || Object.hasOwn(held, reference.key))) continue;
      const id = `${reference.kind}/${reference.name}/${reference.key}`;
      if (!missing.has(id)) missing.set(id, reference);
    }
  }
  return [...missing.values()];
}

/** The rendered overlay's objects; BAD_MANIFEST naming every object it names and lacks, when it lacks any. */
export function runnableManifests(yaml: string): Manifests {
  const manifests = parseManifests(yaml);
  const missing = missingReferences(manifests);
  if (missing.length === 0) return manifests;
  const listed = missing.map((ref) => `${ref.kind} ${ref.name}${ref.key === '*' ? '' : ` key ${ref.key}`} (${ref.by})`);
  throw new LedgerlineError(
    'FAILED_PRECONDITION',
    PodRunnerReason.BAD_MANIFEST,
    `the overlay names objects it does not hold, which its cluster's operators provide: ${listed.join('; ')}; ` +
      'add them to the overlay (or run the dev overlay, which holds all it names)',
    { details: { missing: String(missing.length) } },
  );
}
