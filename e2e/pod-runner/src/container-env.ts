import { LedgerlineError } from '@ledgerline/errors';
import type { Container, EnvVar, Manifests } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

/** What the downward API can tell a container about its pod. */
export interface PodFields {
  name: string;
  namespace: string;
  podIP: string;
  labels: Record<string, string>;
}

function missing(container: string, what: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    PodRunnerReason.BAD_MANIFEST,
    `container ${container}: ${what} (the pod would not start on Kubernetes either)`,
  );
}

/** Kubernetes' $(VAR) expansion: known names are replaced, $$ escapes, unknown references stay as written. */
export function expandReferences(value: string, env: Readonly<Record<string, string>>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return env[name] ?? match;
  });
}

function fieldValue(container: string, fieldPath: string, pod: PodFields): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(fieldPath);
  if (label !== null) return pod.labels[label[1]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return pod.name;
    case 'metadata.namespace':
      return pod.namespace;
    case 'status.podIP':
    case 'status.hostIP':
      return pod.podIP;
    default:
      throw missing(container, `the downward API field ${fieldPath} is not one the pod runner provides`);
  }
}

function referenced(
  container: string,
  kind: 'ConfigMap' | 'Secret',
  source: ReadonlyMap<string, Record<string, string>>,
  ref: { name: string; key: string; optional?: boolean },
): string | undefined {
  const value = source.get(ref.name)?.[ref.key];
  if (value === undefined && ref.optional !== true)
    throw missing(container, `${kind} ${ref.name} has no key ${ref.key}`);
  return value;
}

function valueOf(container: string, entry: EnvVar, manifests: Manifests, pod: PodFields): string | undefined {
  const from = entry.valueFrom;
  if (from === undefined) return entry.value ?? '';
  if (from.fieldRef !== undefined) return fieldValue(container, from.fieldRef.fieldPath, pod);
  if (from.configMapKeyRef !== undefined)
    return referenced(container, 'ConfigMap', manifests.configMaps, from.configMapKeyRef);
  if (from.secretKeyRef !== undefined) return referenced(container, 'Secret', manifests.secrets, from.secretKeyRef);
  throw missing(container, `env ${entry.name} has a valueFrom the pod runner does not know`);
}

/**
 * The container's environment as the kubelet builds it: envFrom sources in
 * order, then env entries in order (later wins), each env value expanded
 * against what is defined before it.
 */
export function containerEnv(container: Container, manifests: Manifests, pod: PodFields): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    if (ref === undefined) continue;
    const values = (source.configMapRef !== undefined ? manifests.configMaps : manifests.secrets).get(ref.name);
    if (values === undefined) {
      if (ref.optional === true) continue;
      throw missing(
        container.name,
        `envFrom names ${source.configMapRef ? 'ConfigMap' : 'Secret'} ${ref.name}, which the overlay does not hold`,
      );
    }
    for (const [key, value] of Object.entries(values)) env[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const entry of container.env ?? []) {
    const value = valueOf(container.name, entry, manifests, pod);
    if (value !== undefined) env[entry.name] = expandReferences(value, env);
  }
  return env;
}
