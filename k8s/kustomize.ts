// A small, strict subset of `kustomize build` plus the checks that the manifests tests run.
// There is no kubectl/kustomize binary in CI, so the tests render base and overlays with this code and then
// validate every resulting object against the Kubernetes OpenAPI schemas (kubernetes-models).
// Anything the subset does not understand is an error, never silently ignored.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: manifests are untyped YAML until validated.
export type K8sObject = Record<string, any>;

type ModelClass = new (data: never) => { validate(): void };

/** apiVersion -> kind -> model class. Unknown pairs are errors. */
const MODELS: Record<string, Record<string, ModelClass>> = {
  v1: { ConfigMap, Namespace, Secret, Service, ServiceAccount },
  'apps/v1': { Deployment },
  'batch/v1': { Job, CronJob },
  'autoscaling/v2': { HorizontalPodAutoscaler },
  'policy/v1': { PodDisruptionBudget },
  'networking.k8s.io/v1': { Ingress, NetworkPolicy },
  'rbac.authorization.k8s.io/v1': { Role, RoleBinding },
};

const CLUSTER_SCOPED = new Set(['Namespace']);
const KUSTOMIZE_API = 'kustomize.config.k8s.io/v1beta1';

export function isKustomization(doc: unknown): boolean {
  return (doc as K8sObject | null)?.kind === 'Kustomization';
}

export function objectId(o: K8sObject): string {
  const ns = o.metadata?.namespace ? `${o.metadata.namespace}/` : '';
  return `${o.apiVersion}/${o.kind} ${ns}${o.metadata?.name}`;
}

/** Parses a YAML file into its documents (empty documents dropped); a YAML error throws. */
export function readYamlDocs(file: string): K8sObject[] {
  return parseYamlDocs(readFileSync(file, 'utf8'), file);
}

export function parseYamlDocs(text: string, source = '<inline>'): K8sObject[] {
  const docs: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value))
      throw new Error(`${source}: document is not a mapping`);
    docs.push(value);
  }
  return docs;
}

/** Every *.yaml / *.yml below dir, sorted. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listYamlFiles(path));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

/** Validates one Kubernetes object against its OpenAPI schema; throws on an unknown apiVersion/kind. */
export function validateObject(o: K8sObject): void {
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') {
    throw new Error(`object without apiVersion/kind: ${JSON.stringify(o).slice(0, 120)}`);
  }
  const Model = MODELS[o.apiVersion]?.[o.kind];
  if (!Model)
    throw new Error(`unknown apiVersion/kind ${o.apiVersion} ${o.kind} (add it to MODELS if intended)`);
  if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') {
    throw new Error(`${o.apiVersion}/${o.kind}: metadata.name is required`);
  }
  try {
    new Model(structuredClone(o) as never).validate();
  } catch (error) {
    throw new Error(`${objectId(o)}: ${(error as Error).message}`);
  }
}

// --- Kustomization ------------------------------------------------------------------------------------------

export type Kustomization = {
  apiVersion: string;
  kind: 'Kustomization';
  namespace?: string;
  resources?: string[];
  patches?: { path: string }[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
};

const KUSTOMIZATION_KEYS = new Set([
  'apiVersion',
  'kind',
  'metadata',
  'namespace',
  'resources',
  'patches',
  'images',
]);
const IMAGE_KEYS = new Set(['name', 'newName', 'newTag', 'digest']);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Structural check of a kustomization.yaml; returns the list of problems (empty when fine). */
export function kustomizationProblems(k: K8sObject, dir: string): string[] {
  const problems: string[] = [];
  if (k.apiVersion !== KUSTOMIZE_API) problems.push(`apiVersion must be ${KUSTOMIZE_API}`);
  if (k.kind !== 'Kustomization') problems.push('kind must be Kustomization');
  for (const key of Object.keys(k)) {
    if (!KUSTOMIZATION_KEYS.has(key))
      problems.push(`unsupported field "${key}" (the test renderer does not know it)`);
  }
  if (k.namespace !== undefined && !(typeof k.namespace === 'string' && DNS_LABEL.test(k.namespace))) {
    problems.push('namespace must be a DNS label');
  }
  if (k.resources !== undefined) {
    if (!Array.isArray(k.resources) || k.resources.length === 0)
      problems.push('resources must be a non-empty list');
    else {
      for (const r of k.resources) {
        if (typeof r !== 'string') problems.push(`resource entry is not a string: ${JSON.stringify(r)}`);
        else if (!exists(resolve(dir, r))) problems.push(`resource "${r}" does not exist`);
        else if (isDir(resolve(dir, r)) && !exists(resolve(dir, r, 'kustomization.yaml'))) {
          problems.push(`resource directory "${r}" has no kustomization.yaml`);
        }
      }
    }
  }
  if (k.patches !== undefined) {
    if (!Array.isArray(k.patches)) problems.push('patches must be a list');
    else {
      for (const p of k.patches) {
        const keys = p && typeof p === 'object' ? Object.keys(p) : [];
        if (keys.length !== 1 || typeof p.path !== 'string') {
          problems.push(
            `patch entry must be { path } (strategic merge, target from the patch): ${JSON.stringify(p)}`,
          );
        } else if (!exists(resolve(dir, p.path)) || isDir(resolve(dir, p.path))) {
          problems.push(`patch "${p.path}" does not exist`);
        }
      }
    }
  }
  if (k.images !== undefined) {
    if (!Array.isArray(k.images)) problems.push('images must be a list');
    else {
      for (const image of k.images) {
        if (typeof image?.name !== 'string')
          problems.push(`image entry without name: ${JSON.stringify(image)}`);
        for (const key of Object.keys(image ?? {})) {
          if (!IMAGE_KEYS.has(key)) problems.push(`image entry has unsupported field "${key}"`);
        }
        if (image?.newTag !== undefined && typeof image.newTag !== 'string') {
          problems.push(`image ${image.name}: newTag must be a string (quote numeric tags)`);
        }
      }
    }
  }
  return problems;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  return exists(path) && statSync(path).isDirectory();
}

export function readKustomization(dir: string): Kustomization {
  const docs = readYamlDocs(join(dir, 'kustomization.yaml'));
  if (docs.length !== 1) throw new Error(`${dir}/kustomization.yaml must hold exactly one document`);
  const problems = kustomizationProblems(docs[0]!, dir);
  if (problems.length > 0) throw new Error(`${dir}/kustomization.yaml: ${problems.join('; ')}`);
  return docs[0] as Kustomization;
}

export type Build = {
  objects: K8sObject[];
  /** Every file that took part (kustomization, resources, patches), absolute paths. */
  files: Set<string>;
  /** Absolute paths of the patch files. */
  patchFiles: Set<string>;
};

/** Renders a kustomization directory like `kustomize build` for the supported subset. */
export function build(dir: string): Build {
  const k = readKustomization(dir);
  const files = new Set([resolve(dir, 'kustomization.yaml')]);
  const patchFiles = new Set<string>();
  let objects: K8sObject[] = [];

  for (const r of k.resources ?? []) {
    const path = resolve(dir, r);
    if (isDir(path)) {
      const sub = build(path);
      objects.push(...sub.objects);
      for (const f of sub.files) files.add(f);
      for (const f of sub.patchFiles) patchFiles.add(f);
    } else {
      files.add(path);
      for (const doc of readYamlDocs(path)) {
        if (isKustomization(doc)) throw new Error(`${path}: a Kustomization listed as a resource`);
        objects.push(doc);
      }
    }
  }

  for (const { path: p } of k.patches ?? []) {
    const path = resolve(dir, p);
    files.add(path);
    patchFiles.add(path);
    const docs = readYamlDocs(path);
    // kubectl's embedded kustomize does not reliably accept several documents in one `patches` file.
    if (docs.length !== 1) throw new Error(`${path}: a patch file must hold exactly one document`);
    objects = applyPatch(objects, docs[0]!, relative(dir, path));
  }

  for (const image of k.images ?? []) {
    let used = false;
    for (const o of objects) {
      for (const c of podContainers(o)) {
        if (imageName(c.image) !== image.name) continue;
        used = true;
        const base = image.newName ?? image.name;
        const tag = image.digest ? `@${image.digest}` : `:${image.newTag ?? imageTag(c.image) ?? 'latest'}`;
        c.image = `${base}${tag}`;
      }
    }
    if (!used) throw new Error(`${dir}: images entry "${image.name}" matches no container`);
  }

  if (k.namespace) {
    for (const o of objects) {
      if (CLUSTER_SCOPED.has(o.kind)) {
        if (o.kind === 'Namespace' && o.metadata.name !== k.namespace) {
          throw new Error(`${dir}: Namespace ${o.metadata.name} differs from namespace: ${k.namespace}`);
        }
        continue;
      }
      o.metadata ??= {};
      o.metadata.namespace = k.namespace;
    }
  }

  const seen = new Set<string>();
  for (const o of objects) {
    const id = `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    if (seen.has(id)) throw new Error(`${dir}: duplicate object ${id}`);
    seen.add(id);
  }
  return { objects, files, patchFiles };
}

function sameTarget(o: K8sObject, patch: K8sObject): boolean {
  const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');
  return (
    group(o.apiVersion) === group(patch.apiVersion) &&
    o.kind === patch.kind &&
    o.metadata?.name === patch.metadata?.name &&
    (patch.metadata?.namespace === undefined || patch.metadata.namespace === o.metadata?.namespace)
  );
}

/** Applies one strategic-merge patch; the target must exist exactly once. */
export function applyPatch(objects: K8sObject[], patch: K8sObject, source: string): K8sObject[] {
  const matches = objects.filter((o) => sameTarget(o, patch));
  if (matches.length !== 1) {
    throw new Error(`${source}: patch target ${objectId(patch)} matches ${matches.length} objects (want 1)`);
  }
  const target = matches[0]!;
  if (patch.$patch === 'delete') return objects.filter((o) => o !== target);
  if (patch.$patch !== undefined) throw new Error(`${source}: unsupported $patch: ${patch.$patch}`);
  const merged = strategicMerge(target, patch) as K8sObject;
  return objects.map((o) => (o === target ? merged : o));
}

/**
 * Strategic merge for the shapes used here: maps merge recursively, `null` deletes a key, lists of objects that
 * all carry `name` (containers, env, ports, volumes, ...) merge by name, every other list is replaced.
 */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (patch === null) return undefined;
  if (Array.isArray(patch)) {
    const byName = (list: unknown[]) =>
      list.every((x) => x !== null && typeof x === 'object' && typeof (x as K8sObject).name === 'string');
    if (!Array.isArray(base) || !byName(base) || !byName(patch)) return structuredClone(patch);
    const out = base.map((x) => structuredClone(x)) as K8sObject[];
    for (const item of patch as K8sObject[]) {
      const i = out.findIndex((x) => x.name === item.name);
      if (item.$patch === 'delete') {
        if (i >= 0) out.splice(i, 1);
      } else if (i >= 0) out[i] = strategicMerge(out[i], item) as K8sObject;
      else out.push(structuredClone(item));
    }
    return out;
  }
  if (typeof patch === 'object') {
    const out: K8sObject =
      base !== null && typeof base === 'object' && !Array.isArray(base)
        ? structuredClone(base as K8sObject)
        : {};
    for (const [key, value] of Object.entries(patch as K8sObject)) {
      const next = strategicMerge(out[key], value);
      if (next === undefined) delete out[key];
      else out[key] = next;
    }
    return out;
  }
  return patch;
}

function imageName(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

function imageTag(image: string): string | undefined {
  const name = imageName(image);
  const rest = image.slice(name.length);
  return rest.startsWith(':') ? rest.slice(1) : undefined;
}

// --- workload helpers ---------------------------------------------------------------------------------------

/** The pod template of a workload, or undefined for other kinds. */
export function podTemplate(o: K8sObject): K8sObject | undefined {
  switch (o.kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'Job':
      return o.spec?.template;
    case 'CronJob':
      return o.spec?.jobTemplate?.spec?.template;
    default:
      return undefined;
  }
}

export function podContainers(o: K8sObject): K8sObject[] {
  const spec = podTemplate(o)?.spec;
  return spec ? [...(spec.initContainers ?? []), ...(spec.containers ?? [])] : [];
}

export function selectorMatches(
  selector: Record<string, string> | undefined,
  labels: Record<string, string>,
) {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

function declaresPort(container: K8sObject, port: unknown): boolean {
  const ports: K8sObject[] = container.ports ?? [];
  return typeof port === 'number'
    ? ports.some((p) => p.containerPort === port)
    : ports.some((p) => p.name === port);
}

// --- cross-object checks ------------------------------------------------------------------------------------

/** Cross-object problems of one rendered set (empty when consistent). */
export function consistencyProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const sameNs = (a: K8sObject, b: K8sObject) =>
    (a.metadata?.namespace ?? '') === (b.metadata?.namespace ?? '');
  const workloads = objects.filter((o) => podTemplate(o));

  // Probes and lifecycle hooks point at ports the container declares.
  for (const w of workloads) {
    for (const c of podContainers(w)) {
      for (const probeName of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
        const probe = c[probeName];
        if (!probe) continue;
        const port = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
        if (port !== undefined && !declaresPort(c, port)) {
          problems.push(
            `${objectId(w)} container ${c.name}: ${probeName} port ${port} is not a declared port`,
          );
        }
      }
      const hooks = [c.lifecycle?.preStop, c.lifecycle?.postStart].filter(Boolean);
      for (const hook of hooks) {
        const port = hook.httpGet?.port ?? hook.tcpSocket?.port;
        if (port !== undefined && !declaresPort(c, port)) {
          problems.push(
            `${objectId(w)} container ${c.name}: lifecycle hook port ${port} is not a declared port`,
          );
        }
      }
      if (
        w.kind === 'Deployment' &&
        c.readinessProbe === undefined &&
        !w.spec.template.spec.initContainers?.includes(c)
      ) {
        problems.push(`${objectId(w)} container ${c.name}: no readinessProbe`);
      }
      // envFrom / secretKeyRef references resolve to objects in the same build.
      for (const ref of c.envFrom ?? []) {
        const cm = ref.configMapRef;
        if (cm && !cm.optional && !of('ConfigMap').some((o) => o.metadata.name === cm.name && sameNs(o, w))) {
          problems.push(`${objectId(w)} container ${c.name}: envFrom ConfigMap ${cm.name} does not exist`);
        }
      }
    }
    // A Deployment's selector must select its own pods (the API server rejects it otherwise).
    if (
      w.spec?.selector?.matchLabels &&
      !selectorMatches(w.spec.selector.matchLabels, w.spec.template.metadata?.labels)
    ) {
      problems.push(`${objectId(w)}: spec.selector does not match the pod template labels`);
    }
  }

  // Services select pods of a Deployment, and each targetPort is declared by that Deployment's containers.
  for (const svc of of('Service')) {
    const selected = of('Deployment').filter(
      (d) => sameNs(d, svc) && selectorMatches(svc.spec?.selector, d.spec?.template?.metadata?.labels),
    );
    if (selected.length === 0) {
      problems.push(`${objectId(svc)}: selector matches no Deployment's pod labels`);
      continue;
    }
    for (const port of svc.spec?.ports ?? []) {
      const target = port.targetPort ?? port.port;
      for (const d of selected) {
        if (!podContainers(d).some((c) => declaresPort(c, target))) {
          problems.push(
            `${objectId(svc)} port ${port.name ?? port.port}: targetPort ${target} not declared by ${objectId(d)}`,
          );
        }
      }
    }
  }

  // Ingress backends name an existing Service and one of its ports.
  for (const ing of of('Ingress')) {
    const backends = [
      ing.spec?.defaultBackend,
      ...(ing.spec?.rules ?? []).flatMap((r: K8sObject) =>
        (r.http?.paths ?? []).map((p: K8sObject) => p.backend),
      ),
    ].filter(Boolean);
    for (const b of backends) {
      if (!b.service) continue;
      const svc = of('Service').find((s) => s.metadata.name === b.service.name && sameNs(s, ing));
      if (!svc) {
        problems.push(`${objectId(ing)}: backend Service ${b.service.name} does not exist`);
        continue;
      }
      const { name, number } = b.service.port ?? {};
      const ok = (svc.spec?.ports ?? []).some((p: K8sObject) =>
        name !== undefined ? p.name === name : p.port === number,
      );
      if (!ok) problems.push(`${objectId(ing)}: Service ${b.service.name} has no port ${name ?? number}`);
    }
  }

  // HPA targets exist and own the replica count; PDBs select pods.
  for (const hpa of of('HorizontalPodAutoscaler')) {
    const ref = hpa.spec?.scaleTargetRef;
    const target = objects.find(
      (o) => o.kind === ref?.kind && o.metadata.name === ref?.name && sameNs(o, hpa),
    );
    if (!target) problems.push(`${objectId(hpa)}: scaleTargetRef ${ref?.kind}/${ref?.name} does not exist`);
    else if (target.spec?.replicas !== undefined) {
      problems.push(
        `${objectId(target)}: sets spec.replicas although ${objectId(hpa)} scales it (apply would fight the HPA)`,
      );
    }
  }
  for (const pdb of of('PodDisruptionBudget')) {
    const selects = workloads.some(
      (w) =>
        sameNs(w, pdb) && selectorMatches(pdb.spec?.selector?.matchLabels, w.spec.template.metadata?.labels),
    );
    if (!selects) problems.push(`${objectId(pdb)}: selector matches no workload's pods`);
  }
  return problems;
}
