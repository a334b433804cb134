import { join } from 'node:path';
import { findRepositoryRoot } from '@ledgerline/cluster';
import { containerProcess, imageName, mapMountedPath } from './container-command.js';
import { containerEnv, expandReferences } from './container-env.js';
import { hostsFile } from './hosts-file.js';
import { parseManifests, renderOverlay, type Manifests, type Workload } from './manifests.js';

const root = findRepositoryRoot(__dirname);
const pod = { name: 'ledgerline-writer-owner-abc-12345', namespace: 'default', podIP: '10.213.40.9', labels: {} };

describe('the dev overlay, rendered and mapped onto local processes', () => {
  let manifests: Manifests;
  const workload = (name: string): Workload => manifests.workloads.find((w) => w.metadata.name === name)!;

  beforeAll(async () => {
    manifests = parseManifests(await renderOverlay(join(root, 'deploy/overlays/dev')));
  }, 60_000);

  it('holds six Deployments and the Redis and NATS StatefulSets', () => {
    expect(manifests.workloads.map((w) => `${w.kind}/${w.metadata.name}`).sort()).toEqual([
      'Deployment/ledgerline-console',
      'Deployment/ledgerline-garbage-collector',
      'Deployment/ledgerline-kafka-gateway',
      'Deployment/ledgerline-metadata',
      'Deployment/ledgerline-readonly-owner',
      'Deployment/ledgerline-writer-owner',
      'StatefulSet/nats',
      'StatefulSet/redis',
    ]);
  });

  it("builds the writer owner's environment from its ConfigMap, Secret and the downward API", () => {
    const env = containerEnv(workload('ledgerline-writer-owner').spec.template.spec.containers[0]!, manifests, pod);
    expect(env).toMatchObject({
      APP: 'writer-owner',
      LEDGERLINE_REDIS_URL: 'redis://redis:6379',
      LEDGERLINE_ADVERTISED_ADDRESS: '10.213.40.9:6650',
      LEDGERLINE_INSTANCE_ID: pod.name,
      LEDGERLINE_METADATA_ADDRESS: 'ledgerline-metadata:6650',
      LEDGERLINE_LEASE_TTL_MS: '5000',
    });
  });

  it('maps the Ledgerline image onto the app bundle and Redis onto redis-server with its folder and AOF', () => {
    const writer = workload('ledgerline-writer-owner').spec.template.spec.containers[0]!;
    const env = containerEnv(writer, manifests, pod);
    const app = containerProcess(writer, { root, env, mounts: new Map(), node: '/usr/bin/node' });
    expect(app).toMatchObject({
      command: '/usr/bin/node',
      args: ['--enable-source-maps', 'dist/apps/writer-owner/main.js'],
    });
    const redis = workload('redis').spec.template.spec.containers[0]!;
    const server = containerProcess(redis, { root, env: {}, mounts: new Map([['/data', '/tmp/claims/data-redis-0']]) });
    expect(server.command).toBe('redis-server');
    expect(server.args).toEqual(
      expect.arrayContaining([
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--dir',
        '/tmp/claims/data-redis-0',
        '--protected-mode',
        'no',
      ]),
    );
  });

  it('refuses a container whose env names a Secret key the overlay lacks', () => {
    const writer = workload('ledgerline-writer-owner').spec.template.spec.containers[0]!;
    const broken = { ...manifests, secrets: new Map() };
    expect(() => containerEnv(writer, broken, pod)).toThrow(/Secret ledgerline-ledger-redis has no key url/);
  });
});

describe('mapping helpers', () => {
  it('expands $(VAR) against what is defined, keeps unknown references and unescapes $$', () => {
    expect(expandReferences('$(POD_IP):6650 $(NOPE) $$(POD_IP)', { POD_IP: '10.0.0.1' })).toBe(
      '10.0.0.1:6650 $(NOPE) $(POD_IP)',
    );
  });

  it('names images without registry, path, tag or digest', () => {
    expect(imageName('registry.example.com/team/redis:7.2.5')).toBe('redis');
    expect(imageName('ledgerline@sha256:abc')).toBe('ledgerline');
  });

  it('maps mounted paths and leaves others alone', () => {
    const mounts = new Map([['/data', '/run/x']]);
    expect(mapMountedPath('/data', mounts)).toBe('/run/x');
    expect(mapMountedPath('/data/appendonly', mounts)).toBe('/run/x/appendonly');
    expect(mapMountedPath('/database', mounts)).toBe('/database');
  });

  it('parses Secret data as base64 with stringData winning', () => {
    const parsed = parseManifests(
      'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: aGVsbG8=, b: eA==}\nstringData: {b: plain}\n',
    );
    expect(parsed.secrets.get('s')).toEqual({ a: 'hello', b: 'plain' });
  });
});

describe('hosts files', () => {
  const service = (name: string, app: string) =>
    ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app } } }) as const;
  const endpoint = (name: string, ip: string, app: string, ready: boolean, terminating = false) => ({
    name,
    ip,
    labels: { app },
    ready,
    terminating,
  });

  it('resolve a Service to its ready pods only, and StatefulSet pods by their own names', () => {
    const content = hostsFile(
      { name: 'client', ip: '10.0.0.9' },
      [service('meta', 'm'), service('redis', 'r')],
      [
        endpoint('m-1', '10.0.0.2', 'm', true),
        endpoint('m-2', '10.0.0.3', 'm', false),
        endpoint('m-3', '10.0.0.4', 'm', true, true),
        { ...endpoint('redis-0', '10.0.0.5', 'r', true), subdomain: 'redis' },
      ],
    );
    const lines = content.trim().split('\n');
    expect(lines.filter((line) => line.includes(' meta '))).toEqual([
      '10.0.0.2 meta meta.default meta.default.svc meta.default.svc.cluster.local',
    ]);
    expect(lines).toContain('10.0.0.5 redis redis.default redis.default.svc redis.default.svc.cluster.local');
    expect(lines.some((line) => line.startsWith('10.0.0.5 redis-0.redis '))).toBe(true);
    expect(lines[1]).toBe('10.0.0.9 client');
  });

  it('resolve a Service with a cluster IP to that address alone', () => {
    const content = hostsFile(
      { name: 'client', ip: '10.0.0.9' },
      [service('meta', 'm')],
      [endpoint('m-1', '10.0.0.2', 'm', true)],
      new Map([['meta', '10.0.0.254']]),
    );
    expect(
      content
        .trim()
        .split('\n')
        .filter((line) => line.includes(' meta ')),
    ).toEqual(['10.0.0.254 meta meta.default meta.default.svc meta.default.svc.cluster.local']);
  });
});
