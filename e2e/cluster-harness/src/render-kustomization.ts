import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/*
 * Renders a kustomization the way `kubectl kustomize` does, for the subset of
 * Kustomize deploy/ uses: resources (files and folders), components (their
 * patches, applied before the kustomization's own), patches (strategic
 * merge, or JSON 6902 add/replace ops, by name or by a kind + label selector
 * target) and images. CI has no kubectl, so the manifest tests render with this; a field
 * outside the subset fails loudly instead of rendering something else. Its
 * output was compared with kubectl kustomize (v5.5) for both overlays.
 */

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
};

interface Target {
  kind?: string;
  name?: string;
  labelSelector?: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  components?: string[];
  patches?: { path?: string; patch?: string; target?: Target }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'images']);
/** What a Component may hold here: patches only. */
const SUPPORTED_IN_COMPONENT = new Set(['apiVersion', 'kind', 'patches']);

function readDocuments(path: string): unknown[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => document.toJS() as unknown)
    .filter((value) => value !== null && value !== undefined);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A strategic merge as Kubernetes does it for these manifests: maps merge, lists of named items merge by name. */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isRecord(target) && isRecord(patch)) {
    const merged: Record<string, unknown> = { ...target };
    for (const [key, value] of Object.entries(patch))
      merged[key] = key in target ? strategicMerge(target[key], value) : value;
    return merged;
  }
  const named = (list: unknown): list is Record<string, unknown>[] =>
    Array.isArray(list) && list.every((item) => isRecord(item) && typeof item['name'] === 'string');
  if (named(target) && named(patch)) {
    const merged = target.map((item) => {
      const update = patch.find((candidate) => candidate['name'] === item['name']);
      return update === undefined ? item : (strategicMerge(item, update) as Record<string, unknown>);
    });
    for (const item of patch) if (!target.some((existing) => existing['name'] === item['name'])) merged.push(item);
    return merged;
  }
  return patch;
}

function applyJsonPatch(object: K8sObject, operations: { op: string; path: string; value?: unknown }[]): void {
  for (const operation of operations) {
    if (operation.op !== 'replace' && operation.op !== 'add')
      throw new Error(`unsupported JSON patch op ${operation.op}`);
    const keys = operation.path
      .split('/')
      .slice(1)
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent: unknown = object;
    for (const key of keys) {
      const child = Array.isArray(parent) ? parent[Number(key)] : isRecord(parent) ? parent[key] : undefined;
      if (!isRecord(child) && !Array.isArray(child))
        throw new Error(`JSON patch path ${operation.path} is missing in ${object.metadata.name}`);
      parent = child;
    }
    if (Array.isArray(parent)) {
      // RFC 6902: `-` appends; an index inserts (add) or replaces one that exists (replace).
      const index = last === '-' ? parent.length : Number(last);
      if (
        !Number.isInteger(index) ||
        index < 0 ||
        index > parent.length ||
        (operation.op === 'replace' && index === parent.length)
      )
        throw new Error(`JSON patch path ${operation.path} is out of range in ${object.metadata.name}`);
      parent.splice(index, operation.op === 'replace' ? 1 : 0, operation.value);
      continue;
    }
    const record = parent as Record<string, unknown>;
    if (operation.op === 'replace' && !(last in record))
      throw new Error(`replace of ${operation.path}: ${object.kind} ${object.metadata.name} has no such field`);
    record[last] = operation.value;
  }
}

function matches(object: K8sObject, target: Target): boolean {
  if (target.kind !== undefined && object.kind !== target.kind) return false;
  if (target.name !== undefined && object.metadata.name !== target.name) return false;
  // Equality requirements, `key=value` and `key!=value`, as Kubernetes label selectors write them.
  for (const requirement of target.labelSelector?.split(',') ?? []) {
    const negated = requirement.includes('!=');
    const [key, value] = requirement.split(negated ? '!=' : '=');
    const equal = object.metadata.labels?.[key!.trim()] === value?.trim();
    if (equal === negated) return false;
  }
  return true;
}

function applyImages(objects: K8sObject[], images: NonNullable<Kustomization['images']>): void {
  for (const object of objects) {
    const spec = (object['spec'] as { template?: { spec?: { containers?: { image: string }[] } } } | undefined)
      ?.template?.spec;
    for (const container of spec?.containers ?? []) {
      const [name, tag] = container.image.split(':');
      const image = images.find((candidate) => candidate.name === name);
      if (image !== undefined) container.image = `${image.newName ?? name}:${image.newTag ?? tag}`;
    }
  }
}

function applyPatches(
  folder: string,
  patches: NonNullable<Kustomization['patches']>,
  objects: K8sObject[],
): K8sObject[] {
  for (const entry of patches) {
    const documents =
      entry.path !== undefined ? readDocuments(join(folder, entry.path)) : [parse(entry.patch!) as unknown];
    if (Array.isArray(documents[0])) {
      const targets = objects.filter((object) => matches(object, entry.target ?? {}));
      if (targets.length === 0) throw new Error(`${folder}: patch ${entry.path ?? '(inline)'} matches nothing`);
      for (const object of targets) applyJsonPatch(object, documents[0] as { op: string; path: string }[]);
      continue;
    }
    for (const patch of documents as K8sObject[]) {
      const target = { kind: patch.kind, name: patch.metadata.name, ...entry.target };
      const found = objects.filter((object) => matches(object, target));
      if (found.length === 0)
        throw new Error(`${folder}: patch of ${patch.kind} ${patch.metadata.name} matches nothing`);
      objects = objects.map((object) =>
        found.includes(object) ? (strategicMerge(object, patch) as K8sObject) : object,
      );
    }
  }
  return objects;
}

function readKustomization(folder: string, supported: ReadonlySet<string>): Kustomization {
  const kustomization = parse(readFileSync(join(folder, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !supported.has(key));
  if (unsupported.length > 0)
    throw new Error(`${folder}: the test renderer does not support ${unsupported.join(', ')}`);
  return kustomization;
}

/** The objects `kubectl kustomize folder` would print, in resource order. */
export function renderKustomization(folder: string): K8sObject[] {
  const kustomization = readKustomization(folder, SUPPORTED);
  let objects: K8sObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(folder, resource);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path) : (readDocuments(path) as K8sObject[])));
  }
  for (const component of kustomization.components ?? []) {
    const componentFolder = join(folder, component);
    const patches = readKustomization(componentFolder, SUPPORTED_IN_COMPONENT).patches ?? [];
    objects = applyPatches(componentFolder, patches, objects);
  }
  objects = applyPatches(folder, kustomization.patches ?? [], objects);
  applyImages(objects, kustomization.images ?? []);
  return objects;
}

/** The folder holding deploy/'s kustomizations. */
export function deployFolder(root: string): string {
  return join(root, 'deploy');
}
