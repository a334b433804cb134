import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/*
 * Renders a kustomization the way `kubectl kustomize` does, for the subset of
 * Kustomize deploy/ uses: resources (files and folders), patches (strategic
 * merge, or JSON 6902 ops, by name or by a kind + label selector target) and
 * images. CI has no kubectl, so the manifest tests render with this; a field
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
  patches?: { path?: string; patch?: string; target?: Target }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'patches', 'images']);

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
    const keys = operation.path
      .split('/')
      .slice(1)
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent: Record<string, unknown> = object;
    for (const key of keys) {
      if (!isRecord(parent[key]))
        throw new Error(`JSON patch path ${operation.path} is missing in ${object.metadata.name}`);
      parent = parent[key] as Record<string, unknown>;
    }
    if (operation.op === 'replace' && !(last in parent))
      throw new Error(`replace of ${operation.path}: ${object.kind} ${object.metadata.name} has no such field`);
    if (operation.op !== 'replace' && operation.op !== 'add')
      throw new Error(`unsupported JSON patch op ${operation.op}`);
    parent[last] = operation.value;
  }
}

function matches(object: K8sObject, target: Target): boolean {
  if (target.kind !== undefined && object.kind !== target.kind) return false;
  if (target.name !== undefined && object.metadata.name !== target.name) return false;
  for (const requirement of target.labelSelector?.split(',') ?? []) {
    const [key, value] = requirement.split('=');
    if (object.metadata.labels?.[key!.trim()] !== value?.trim()) return false;
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

/** The objects `kubectl kustomize folder` would print, in resource order. */
export function renderKustomization(folder: string): K8sObject[] {
  const kustomization = parse(readFileSync(join(folder, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length > 0)
    throw new Error(`${folder}: the test renderer does not support ${unsupported.join(', ')}`);
  let objects: K8sObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(folder, resource);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path) : (readDocuments(path) as K8sObject[])));
  }
  for (const entry of kustomization.patches ?? []) {
    const documents =
      entry.path !== undefined ? readDocuments(join(folder, entry.path)) : [parse(entry.patch!) as unknown];
    if (Array.isArray(documents[0])) {
      const targets = objects.filter((object) => matches(object, entry.target ?? {}));
      if (targets.length === 0) throw new Error(`${folder}: patch ${entry.path} matches nothing`);
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
  applyImages(objects, kustomization.images ?? []);
  return objects;
}

/** The folder holding deploy/'s kustomizations. */
export function deployFolder(root: string): string {
  return join(root, 'deploy');
}
