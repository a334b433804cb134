import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { clusterCollectorConfigSchema } from '@ledgerline/garbage-collector';
import { kafkaGatewayClusterConfigSchema } from '@ledgerline/kafka-gateway';
import { clusterConsoleConfigSchema } from '@ledgerline/console';
import { clusterConfigSchema } from '@ledgerline/metadata-service';
import { serviceConfigSchema, settingSource } from '@ledgerline/service-kit';
import { writerClusterConfigSchema } from '@ledgerline/writer-owner';
import { readOnlyClusterConfigSchema } from '@ledgerline/readonly-owner';
import type { z } from 'zod';
import { findRepositoryRoot, CLUSTER_ROLES, ROLE_SPECS, type ClusterRole } from '@ledgerline/cluster';
import { renderKustomization, type K8sObject } from './index.js';

/*
 * deploy/ checked offline (CI has no cluster, no kubectl, no Docker): every
 * overlay renders, every object passes the Kubernetes schemas, and the
 * invariants and cross-references hold: selectors match labels, names and
 * ports resolve, each app gets exactly the settings it reads.
 */

const ROOT = findRepositoryRoot(__dirname);
const DEPLOY = join(ROOT, 'deploy');
const OVERLAYS = ['dev', 'prod'];
/** Secrets an overlay expects the operator's secret tooling to make (see deploy/overlays/prod): token keys and roles. */
const SECRETS_MADE_BY_OPERATORS = new Set(['ledgerline-auth']);

function sampleInstance() {
  return { name: 'x-0', index: 0, grpcPort: 1, redisUrl: 'redis://r:1', natsUrl: 'nats://n:1', metadataTarget: 'm:1' };
}

const GATEWAY: ClusterRole = 'kafka-gateway';
type DeployedApp = ClusterRole;

/** The settings schema of each deployed app; null where the app is not in this checkout yet. */
const SCHEMAS: Record<DeployedApp, z.ZodObject | null> = {
  metadata: clusterConfigSchema,
  'writer-owner': writerClusterConfigSchema,
  'readonly-owner': readOnlyClusterConfigSchema,
  'garbage-collector': clusterCollectorConfigSchema,
  'kafka-gateway': kafkaGatewayClusterConfigSchema,
  console: clusterConsoleConfigSchema,
};

function harnessEnvs(role: DeployedApp): string[] {
  const spec = ROLE_SPECS.find((candidate) => candidate.role === role);
  return spec === undefined ? [] : Object.keys(spec.settings(sampleInstance()));
}

/** The LEDGERLINE_* variables an app reads. */
function knownSettings(role: DeployedApp): Set<string> {
  const schema = SCHEMAS[role];
  if (schema === null) return new Set([...settingEnvs(serviceConfigSchema), ...harnessEnvs(role)]);
  return settingEnvs(schema);
}

/** The LEDGERLINE_* variables an app cannot start without. */
function requiredSettings(role: DeployedApp): string[] {
  const schema = SCHEMAS[role];
  if (schema === null) return harnessEnvs(role).filter((name) => name !== 'LEDGERLINE_ADVERTISED_ADDRESS');
  return Object.entries(schema.shape)
    .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
    .map(([key]) => settingSource(key).env);
}

function settingEnvs(schema: z.ZodObject): Set<string> {
  return new Set(Object.keys(schema.shape).map((key) => settingSource(key).env));
}

/** Every `name: 'ledgerline_...'` a metric is registered with in the libraries' sources. */
function registeredMetricNames(folder: string): Set<string> {
  const names = new Set<string>();
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.spec.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const match of text.matchAll(/name: '(ledgerline_[a-z_]+)'/g)) names.add(match[1]!);
  }
  return names;
}

type Probe = {
  grpc?: { port: number };
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
};
type Container = {
  name: string;
  image: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string }; configMapKeyRef?: { name: string } };
  }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
};
type PodSpec = {
  containers: Container[];
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean };
  terminationGracePeriodSeconds?: number;
};
const podSpec = (object: K8sObject) => (object['spec'] as { template: { spec: PodSpec } }).template.spec;
const podLabels = (object: K8sObject) =>
  (object['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([key, value]) => labels?.[key] === value);

/** kubernetes-models' classes by API version: each kind's constructor and validate(). */
const MODELS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'autoscaling/v2': autoscalingV2,
  'policy/v1': policyV1,
  'networking.k8s.io/v1': networkingV1,
};

function validateSchema(object: K8sObject): void {
  const Model = MODELS[object.apiVersion]?.[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (Model === undefined)
    throw new Error(`no schema for ${object.apiVersion} ${object.kind}: add its API version to MODELS`);
  new Model(object).validate();
}

/** The services a cell of the 'Who calls whom' table names ('writer and read-only owners' names two). */
function servicesIn(cell: string): DeployedApp[] {
  const named: [RegExp, DeployedApp][] = [
    [/^metadata/, 'metadata'],
    [/writer (owner|and|or|\/)/, 'writer-owner'],
    [/read-only owner/, 'readonly-owner'],
    [/^garbage collector/, 'garbage-collector'],
    [/^Kafka gateway/, 'kafka-gateway'],
    [/^console/, 'console'],
  ];
  return named.filter(([pattern]) => pattern.test(cell)).map(([, app]) => app);
}

/** Every call from one service to another that docs/architecture.md's 'Who calls whom' table lists. */
function serviceCalls(): { caller: DeployedApp; callee: DeployedApp }[] {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const table = doc.slice(doc.indexOf('### Who calls whom'));
  const rows = table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| caller') && !line.startsWith('| ---'));
  return rows.flatMap((row) => {
    const [callerCell, calleeCell] = row
      .split('|')
      .slice(1, 3)
      .map((cell) => cell.trim());
    return servicesIn(callerCell!).flatMap((caller) => servicesIn(calleeCell!).map((callee) => ({ caller, callee })));
  });
}

describe.each(OVERLAYS)('deploy/overlays/%s', (overlay) => {
  const objects = renderKustomization(join(DEPLOY, 'overlays', overlay));
  const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
  const named = (kind: string, name: string) =>
    objects.find((object) => object.kind === kind && object.metadata.name === name);
  const workloads = [...ofKind('Deployment'), ...ofKind('StatefulSet')];
  const deployments = ofKind('Deployment');
  const appOf = (deployment: K8sObject) =>
    podSpec(deployment).containers[0]!.env!.find((entry) => entry.name === 'APP')!.value as DeployedApp;
  /** A container's LEDGERLINE_* settings: its own env and every ConfigMap it loads. */
  const settingsOf = (container: Container): Map<string, string | undefined> => {
    const settings = new Map<string, string | undefined>();
    for (const source of container.envFrom ?? []) {
      const configMap = named('ConfigMap', source.configMapRef!.name)!;
      for (const [key, value] of Object.entries(configMap['data'] as Record<string, string>)) settings.set(key, value);
    }
    for (const entry of container.env ?? []) settings.set(entry.name, entry.value);
    return settings;
  };

  it('renders objects that pass the Kubernetes schemas, each name once per kind', () => {
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) expect(() => validateSchema(object)).not.toThrow();
    const keys = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('runs every service of the local cluster (and in prod the Kafka gateway) as a Deployment of the one image, APP naming the app', () => {
    expect(deployments.map(appOf).sort()).toEqual([...CLUSTER_ROLES].sort());
    for (const deployment of deployments) {
      expect(deployment.metadata.name).toBe(`ledgerline-${appOf(deployment)}`);
      const image = podSpec(deployment).containers[0]!.image;
      expect(image).toMatch(/(^|\/)ledgerline:\d+\.\d+\.\d+$/);
    }
    for (const workload of workloads)
      for (const container of podSpec(workload).containers) expect(container.image).not.toMatch(/:latest$|^[^:]+$/);
  });

  it('gives every Deployment probes its port answers, a preStop matched to the drain bound, limits, non-root, a PDB and an HPA', () => {
    for (const deployment of deployments) {
      const spec = podSpec(deployment);
      const container = spec.containers[0]!;
      const grpcPort = container.ports!.find((port) => port.name === 'grpc')!.containerPort;
      if (settingsOf(container).has('LEDGERLINE_TLS_CERT')) {
        // The kubelet's gRPC probe cannot speak TLS: readiness from /healthz, liveness and start-up from the port.
        expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'metrics' });
        expect(container.livenessProbe?.tcpSocket?.port).toBe('grpc');
        expect(container.startupProbe?.tcpSocket?.port).toBe('grpc');
      } else {
        expect(container.readinessProbe?.grpc?.port).toBe(grpcPort);
        expect(container.livenessProbe?.grpc?.port).toBe(grpcPort);
      }
      expect(Object.keys(container.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
      expect(Object.keys(container.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      // SIGKILL must not come before preStop + the drain + the closers (at most 3 of 5 s each).
      const [sleep, seconds] = container.lifecycle!.preStop!.exec!.command;
      expect(sleep).toBe('sleep');
      const drainMs = Number(settingsOf(container).get('LEDGERLINE_DRAIN_TIMEOUT_MS'));
      expect(drainMs).toBeGreaterThan(0);
      expect(spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThanOrEqual(
        Number(seconds) * 1000 + drainMs + 15_000,
      );
      const labels = podLabels(deployment);
      const pdbs = ofKind('PodDisruptionBudget').filter((pdb) =>
        selects((pdb['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, labels),
      );
      expect(pdbs).toHaveLength(1);
      const hpas = ofKind('HorizontalPodAutoscaler').filter(
        (hpa) =>
          (hpa['spec'] as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef.name ===
          deployment.metadata.name,
      );
      expect(hpas).toHaveLength(1);
      const replicas = (deployment['spec'] as { replicas: number }).replicas;
      const { minReplicas, maxReplicas } = hpas[0]!['spec'] as { minReplicas: number; maxReplicas: number };
      expect(minReplicas).toBeLessThanOrEqual(replicas);
      expect(maxReplicas).toBeGreaterThanOrEqual(replicas);
    }
  });

  it('resolves every reference: selectors, ports, ConfigMaps, Secrets, service accounts', () => {
    for (const service of ofKind('Service')) {
      const spec = service['spec'] as { selector: Record<string, string>; ports: { targetPort: string | number }[] };
      const backends = workloads.filter((workload) => selects(spec.selector, podLabels(workload)));
      expect(backends.map((backend) => backend.metadata.name)).toHaveLength(1);
      const portNames = podSpec(backends[0]!)
        .containers.flatMap((container) => container.ports ?? [])
        .map((port) => port.name);
      for (const port of spec.ports) expect(portNames).toContain(port.targetPort);
    }
    for (const policy of ofKind('NetworkPolicy')) {
      const spec = policy['spec'] as {
        podSelector: { matchLabels: Record<string, string> };
        egress: { to?: { podSelector?: { matchLabels: Record<string, string> } }[] }[];
      };
      expect(
        deployments.filter((deployment) => selects(spec.podSelector.matchLabels, podLabels(deployment))),
      ).toHaveLength(1);
      for (const rule of spec.egress)
        for (const peer of rule.to ?? [])
          if (peer.podSelector !== undefined)
            expect(workloads.some((workload) => selects(peer.podSelector!.matchLabels, podLabels(workload)))).toBe(
              true,
            );
    }
    for (const workload of workloads) {
      const spec = podSpec(workload);
      if (spec.serviceAccountName !== undefined) expect(named('ServiceAccount', spec.serviceAccountName)).toBeDefined();
      for (const container of spec.containers) {
        for (const source of container.envFrom ?? [])
          expect(named('ConfigMap', source.configMapRef!.name)).toBeDefined();
        for (const entry of container.env ?? []) {
          const secret = entry.valueFrom?.secretKeyRef?.name;
          if (secret !== undefined && !SECRETS_MADE_BY_OPERATORS.has(secret))
            expect(named('Secret', secret)).toBeDefined();
        }
      }
    }
  });

  it('gives each app exactly settings it reads, all it requires, and addresses of Services that exist', () => {
    for (const deployment of deployments) {
      const role = appOf(deployment);
      const container = podSpec(deployment).containers[0]!;
      const settings = settingsOf(container);
      const given = [...settings.keys()].filter((name) => name.startsWith('LEDGERLINE_'));
      const known = knownSettings(role);
      expect(given.filter((name) => !known.has(name))).toEqual([]);
      expect(requiredSettings(role).filter((name) => !settings.has(name))).toEqual([]);
      const metadataAddress = settings.get('LEDGERLINE_METADATA_ADDRESS');
      if (metadataAddress !== undefined) {
        const [host, port] = metadataAddress.split(':');
        const service = named('Service', host!);
        expect(service).toBeDefined();
        expect((service!['spec'] as { ports: { port: number }[] }).ports.map((entry) => entry.port)).toContain(
          Number(port),
        );
      }
      // The Kafka gateway and the console reach only the services: no NATS.
      if (role === GATEWAY || role === 'console') {
        expect(settings.has('LEDGERLINE_NATS_URL')).toBe(false);
        continue;
      }
      const natsUrl = settings.get('LEDGERLINE_NATS_URL')!;
      expect(natsUrl.split(',').every((url) => /^nats:\/\/[^,]+:\d+$/.test(url))).toBe(true);
      if (overlay === 'dev') expect(named('Service', new URL(natsUrl).hostname)).toBeDefined();
    }
    if (overlay === 'dev') {
      for (const secret of ofKind('Secret')) {
        const url = new URL((secret['stringData'] as { url: string }).url);
        expect(named('Service', url.hostname)).toBeDefined();
      }
    }
  });

  it("lets every call between services in docs/architecture.md's 'Who calls whom' table through both NetworkPolicies", () => {
    const calls = serviceCalls();
    expect(calls.length).toBeGreaterThan(8);
    const policyOf = (app: DeployedApp) =>
      named('NetworkPolicy', `ledgerline-${app}`)!['spec'] as {
        ingress: { from?: { podSelector?: { matchLabels: Record<string, string> } }[]; ports?: { port: number }[] }[];
        egress: { to?: { podSelector?: { matchLabels: Record<string, string> } }[]; ports?: { port: number }[] }[];
      };
    const labelsOf = (app: DeployedApp) => podLabels(named('Deployment', `ledgerline-${app}`)!);
    // A call into the Kafka gateway may be the Kafka protocol (the console's
    // group pages), on its Kafka port rather than gRPC.
    const servicePorts = (callee: DeployedApp) => (callee === GATEWAY ? [6650, 9092] : [6650]);
    const blocked = calls.filter(({ caller, callee }) => {
      const onGrpc = (ports: { port: number }[] | undefined) =>
        ports === undefined || ports.some((p) => servicePorts(callee).includes(p.port));
      const out = policyOf(caller).egress.some(
        (rule) =>
          onGrpc(rule.ports) &&
          (rule.to === undefined ||
            rule.to.some(
              (peer) => peer.podSelector !== undefined && selects(peer.podSelector.matchLabels, labelsOf(callee)),
            )),
      );
      const into = policyOf(callee).ingress.some(
        (rule) =>
          onGrpc(rule.ports) &&
          (rule.from === undefined ||
            rule.from.some(
              (peer) => peer.podSelector !== undefined && selects(peer.podSelector.matchLabels, labelsOf(caller)),
            )),
      );
      return !(out && into);
    });
    expect(blocked).toEqual([]);
  });

  it('makes every Kafka gateway pod addressable as a broker: it advertises its own pod IP and Kafka port', () => {
    const deployment = named('Deployment', 'ledgerline-kafka-gateway')!;
    const container = podSpec(deployment).containers[0]!;
    const env = container.env as { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
    const kafkaPort = container.ports!.find((port) => port.name === 'kafka')!.containerPort;
    const podIp = env.findIndex((entry) => entry.valueFrom?.fieldRef?.fieldPath === 'status.podIP');
    const advertised = env.findIndex((entry) => entry.name === 'LEDGERLINE_KAFKA_ADVERTISED_ADDRESS');
    // $(VAR) expands only variables defined before it in the list.
    expect(podIp).toBeGreaterThanOrEqual(0);
    expect(advertised).toBeGreaterThan(podIp);
    expect(env[advertised]!.value).toBe(`$(${env[podIp]!.name}):${kafkaPort}`);
    expect(settingsOf(container).get('LEDGERLINE_KAFKA_PORT')).toBe(String(kafkaPort));
    const service = named('Service', 'ledgerline-kafka-gateway')!;
    expect((service['spec'] as { ports: { port: number; targetPort: string }[] }).ports).toContainEqual(
      expect.objectContaining({ port: kafkaPort, targetPort: 'kafka' }),
    );
    const policy = named('NetworkPolicy', 'ledgerline-kafka-gateway')!;
    const ingress = (policy['spec'] as { ingress: { from?: unknown[]; ports: { port: number }[] }[] }).ingress;
    expect(ingress.some((rule) => rule.from === undefined && rule.ports.some((port) => port.port === kafkaPort))).toBe(
      true,
    );
    const egress = (
      policy['spec'] as { egress: { to?: { podSelector?: { matchLabels: Record<string, string> } }[] }[] }
    ).egress;
    const reached = egress
      .flatMap((rule) => rule.to ?? [])
      .map((peer) => peer.podSelector?.matchLabels['app.kubernetes.io/name']);
    expect(reached.sort()).toEqual(['ledgerline-metadata', 'ledgerline-readonly-owner', 'ledgerline-writer-owner']);
  });
});

describe('deploy/', () => {
  it('holds one Kustomize base per service of the local cluster, each in every overlay', () => {
    const bases = readdirSync(DEPLOY, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !['overlays', 'grafana', 'components'].includes(entry.name))
      .map((entry) => entry.name)
      .sort();
    expect(bases).toEqual(ROLE_SPECS.map((spec) => spec.app).sort());
    for (const overlay of OVERLAYS) {
      const resources = readFileSync(join(DEPLOY, 'overlays', overlay, 'kustomization.yaml'), 'utf8');
      for (const base of CLUSTER_ROLES) expect(resources).toContain(`- ../../${base}\n`);
    }
  });

  it.each(ROLE_SPECS.map((spec) => spec.app))('base %s renders alone, passes the schemas and pins its image', (app) => {
    const objects = renderKustomization(join(DEPLOY, app));
    for (const object of objects) expect(() => validateSchema(object)).not.toThrow();
    const deployment = objects.find((object) => object.kind === 'Deployment')!;
    expect(podSpec(deployment).containers[0]!.image).toMatch(/^ledgerline:\d+\.\d+\.\d+$/);
  });

  it('charts only metrics the services register', () => {
    const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana', 'ledgerline-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const registered = registeredMetricNames(join(ROOT, 'libs'));
    const charted = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) => target.expr.match(/ledgerline_[a-z_]+/g) ?? []),
    );
    expect(charted.length).toBeGreaterThan(10);
    const unknown = charted
      .map((name) => name.replace(/_(bucket|count|sum)$/, ''))
      .filter((name) => !registered.has(name));
    expect(unknown).toEqual([]);
  });

  it('builds one image in two stages that runs the bundle as non-root node, PID 1, with no tests in the context', () => {
    const dockerfile = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/nx run-many -t build/);
    // The last USER is the one the container runs as.
    expect([...dockerfile.matchAll(/^USER (\S+)/gm)].at(-1)?.[1]).toBe('node');
    expect(dockerfile).toMatch(/^CMD \["sh", "-c", "exec node \\"dist\/apps\/\$\{APP\}\/main\.js\\""\]$/m);
    const ignored = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['**/*.spec.ts', '**/src/testing', 'libs/testing/*']));
  });

  it('the local cluster gives each app only settings its schema reads', () => {
    for (const spec of ROLE_SPECS) {
      const known = knownSettings(spec.role);
      expect(Object.keys(spec.settings(sampleInstance())).filter((name) => !known.has(name))).toEqual([]);
    }
  });
});
