import { execFile } from 'node:child_process';
import { LedgerlineError } from '@ledgerline/errors';
import { parseAllDocuments } from 'yaml';
import { PodRunnerReason } from './reasons.js';

/*
 * The parts of the Kubernetes objects the runner reads. The rendered
 * manifests are checked against the full schemas offline (deploy-manifests
 * spec); here only what running them needs is typed.
 */

export interface ObjectMeta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export type PortRef = number | string;

export interface Probe {
  grpc?: { port: number; service?: string };
  httpGet?: { path?: string; port: PortRef; scheme?: string };
  tcpSocket?: { port: PortRef };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  volumes?: { name: string; emptyDir?: unknown; configMap?: unknown; secret?: unknown }[];
}

export interface PodTemplate {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

export interface Workload extends KubeObject {
  kind: 'Deployment' | 'StatefulSet';
  spec: {
    replicas?: number;
    selector: { matchLabels?: Record<string, string> };
    serviceName?: string;
    strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
    template: PodTemplate;
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: PortRef;
}

export interface Service extends KubeObject {
  kind: 'Service';
  spec: {
    selector?: Record<string, string>;
    clusterIP?: string;
    ports?: ServicePort[];
    publishNotReadyAddresses?: boolean;
  };
}

export interface DataObject extends KubeObject {
  kind: 'ConfigMap' | 'Secret';
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The objects of one rendered overlay, by kind. */
/** policy/v1 PodDisruptionBudget: what `pods drain` honours (disruption.ts). */
export interface DisruptionBudget extends KubeObject {
  kind: 'PodDisruptionBudget';
  spec: {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    selector?: { matchLabels?: Record<string, string> };
  };
}

export interface Manifests {
  readonly objects: readonly KubeObject[];
  readonly workloads: readonly Workload[];
  readonly services: readonly Service[];
  readonly budgets: readonly DisruptionBudget[];
  readonly configMaps: ReadonlyMap<string, Record<string, string>>;
  readonly secrets: ReadonlyMap<string, Record<string, string>>;
}

/** How long `kubectl kustomize` may take for one overlay. */
const RENDER_TIMEOUT_MS = 60_000;
/** The largest rendered output read (the overlays render to about 50 KB). */
const MAX_RENDER_BYTES = 16 * 1024 * 1024;

/** `kubectl kustomize <overlay>`: the overlay's objects as YAML. */
export function renderOverlay(overlay: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      'kubectl',
      ['kustomize', overlay],
      { timeout: RENDER_TIMEOUT_MS, maxBuffer: MAX_RENDER_BYTES },
      (error, stdout, stderr) =>
        error === null
          ? resolve(stdout)
          : reject(
              new LedgerlineError(
                'FAILED_PRECONDITION',
                PodRunnerReason.RENDER_FAILED,
                `kubectl kustomize ${overlay} failed: ${stderr.trim() || error.message}`,
              ),
            ),
    ),
  );
}

function isObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<KubeObject>;
  return typeof candidate.kind === 'string' && typeof candidate.metadata?.name === 'string';
}

/** Secret `data` is base64; `stringData` (which the API server merges into data) is plain and wins. */
function secretValues(secret: DataObject): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) values[key] = Buffer.from(value, 'base64').toString();
  return { ...values, ...(secret.stringData ?? {}) };
}

/** Parses a multi-document YAML stream into the objects the runner uses. */
export function parseManifests(yamlText: string): Manifests {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    if (document.errors.length > 0) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        PodRunnerReason.BAD_MANIFEST,
        `the rendered manifests are not valid YAML: ${document.errors[0]!.message}`,
      );
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (!isObject(value)) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        PodRunnerReason.BAD_MANIFEST,
        'a rendered document has no kind or metadata.name',
      );
    }
    objects.push(value);
  }
  const configMaps = new Map<string, Record<string, string>>();
  const secrets = new Map<string, Record<string, string>>();
  for (const object of objects) {
    if (object.kind === 'ConfigMap') configMaps.set(object.metadata.name, { ...((object as DataObject).data ?? {}) });
    if (object.kind === 'Secret') secrets.set(object.metadata.name, secretValues(object as DataObject));
  }
  return {
    objects,
    workloads: objects.filter((o): o is Workload => o.kind === 'Deployment' || o.kind === 'StatefulSet'),
    services: objects.filter((o): o is Service => o.kind === 'Service'),
    budgets: objects.filter((o): o is DisruptionBudget => o.kind === 'PodDisruptionBudget'),
    configMaps,
    secrets,
  };
}

/** Whether every label of `selector` is on `labels` (an empty or missing selector selects nothing here). */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}
