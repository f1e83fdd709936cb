import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  applyPatch,
  type Build,
  build,
  consistencyProblems,
  isKustomization,
  type K8sObject,
  kustomizationProblems,
  listYamlFiles,
  parseYamlDocs,
  podContainers,
  readYamlDocs,
  validateObject,
} from './kustomize.ts';

const K8S = dirname(fileURLToPath(import.meta.url));
const BASE = join(K8S, 'base');
const OVERLAYS = { production: join(K8S, 'overlays/production'), local: join(K8S, 'overlays/local') };
const KUSTOMIZATION_DIRS = [BASE, ...Object.values(OVERLAYS)];
const rel = (path: string) => relative(K8S, path);

// A build error (missing file, patch without target, ...) is reported by its own test below instead of failing
// the whole file at collection time; the tests that need a rendered set then rethrow it.
const results: Record<string, Build | Error> = Object.fromEntries(
  KUSTOMIZATION_DIRS.map((dir) => {
    try {
      return [rel(dir), build(dir)];
    } catch (error) {
      return [rel(dir), error as Error];
    }
  }),
);
const builds = new Proxy({} as Record<string, Build>, {
  get: (_, name: string) => {
    const result = results[name];
    if (result instanceof Error) throw result;
    return result;
  },
});
const okBuilds = Object.values(results).filter((r): r is Build => !(r instanceof Error));
const allFiles = listYamlFiles(K8S);
// Read from the kustomization files themselves, so a broken build does not turn its patches into "objects".
const patchFiles = new Set(
  allFiles
    .filter((f) => f.endsWith('kustomization.yaml'))
    .flatMap((f) =>
      readYamlDocs(f).flatMap((k) =>
        (Array.isArray(k.patches) ? k.patches : []).map((p) => join(dirname(f), p.path)),
      ),
    ),
);

const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata?.name === name);
const container = (objects: K8sObject[], deployment: string) => {
  const d = find(objects, 'Deployment', deployment);
  expect(d, `Deployment ${deployment}`).toBeDefined();
  return d!.spec.template.spec.containers[0] as K8sObject;
};

it.each(Object.keys(results))('kustomize build %s succeeds', (name) => {
  const result = results[name];
  if (result instanceof Error) throw result;
});

describe('every YAML file under k8s/', () => {
  it('finds the expected layout', () => {
    expect(allFiles.map(rel)).toEqual(
      expect.arrayContaining(KUSTOMIZATION_DIRS.map((d) => rel(join(d, 'kustomization.yaml')))),
    );
  });

  it.each(allFiles.map(rel))('%s parses and validates', (file) => {
    const path = join(K8S, file);
    const docs = readYamlDocs(path);
    expect(docs.length, 'at least one document').toBeGreaterThan(0);
    for (const doc of docs) {
      if (isKustomization(doc)) {
        expect(file.endsWith('kustomization.yaml'), 'a Kustomization lives in kustomization.yaml').toBe(true);
        expect(kustomizationProblems(doc, dirname(path))).toEqual([]);
      } else if (patchFiles.has(path)) {
        // Partial objects: validated after merging (rendered builds below); here only their identity.
        expect(typeof doc.apiVersion, 'patch apiVersion').toBe('string');
        expect(typeof doc.kind, 'patch kind').toBe('string');
        expect(typeof doc.metadata?.name, 'patch metadata.name').toBe('string');
      } else {
        validateObject(doc);
      }
    }
  });

  it('is used by some kustomization (no orphan manifests)', () => {
    const used = new Set(okBuilds.flatMap((b) => [...b.files]));
    expect(allFiles.filter((f) => !used.has(f)).map(rel)).toEqual([]);
  });
});

describe.each(Object.keys(results))('rendered %s', (name) => {
  const objects = () => builds[name]!.objects;

  it('validates every object against the Kubernetes schemas', () => {
    expect(objects().length).toBeGreaterThan(0);
    for (const o of objects()) validateObject(o);
  });

  it('is internally consistent (probe ports, Service selectors/ports, Ingress backends, HPA, PDB, envFrom)', () => {
    expect(consistencyProblems(objects())).toEqual([]);
  });

  it('routes the model API paths to the relay and the rest to the console', () => {
    const ingress = find(objects(), 'Ingress', 'switchyard')!;
    const routes = Object.fromEntries(
      ingress.spec.rules
        .flatMap((r: K8sObject) => r.http.paths)
        .map((p: K8sObject) => [`${p.pathType} ${p.path}`, p.backend.service.name]),
    );
    expect(routes).toEqual({
      'Prefix /v1': 'switchyard-relay',
      'Prefix /v1beta': 'switchyard-relay',
      'Prefix /mj': 'switchyard-relay',
      'Prefix /mj-fast/mj': 'switchyard-relay',
      'Prefix /mj-turbo/mj': 'switchyard-relay',
      'Prefix /mj-relax/mj': 'switchyard-relay',
      'Prefix /suno': 'switchyard-relay',
      'Prefix /': 'switchyard-console',
    });
    expect(ingress.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': expect.stringMatching(/^\d+$/),
    });
    expect(
      Number(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']),
    ).toBeGreaterThanOrEqual(600);
  });

  it('wires console and relay to each other and to the gRPC health probes', () => {
    const config = find(objects(), 'ConfigMap', 'switchyard-config')!;
    expect(config.data).toMatchObject({
      HOST: '0.0.0.0',
      PORT: '3000',
      CONSOLE_GRPC_HOST: '0.0.0.0',
      CONSOLE_GRPC_PORT: '50051',
      RELAY_HOST: '0.0.0.0',
      RELAY_PORT: '3001',
      RELAY_GRPC_HOST: '0.0.0.0',
      RELAY_GRPC_PORT: '50052',
      RELAY_URL: 'http://switchyard-relay:3001',
      RELAY_GRPC_URL: 'switchyard-relay:50052',
      BILLING_GRPC_URL: 'switchyard-console:50051',
      NODE_ENV: 'production',
    });
    const console = container(objects(), 'switchyard-console');
    expect(console.command).toEqual(['node', 'scripts/serve-console.ts']);
    expect(console.readinessProbe.grpc.port).toBe(50051);
    expect(console.livenessProbe.httpGet).toMatchObject({ path: '/healthz' });
    const relay = container(objects(), 'switchyard-relay');
    expect(relay.command).toEqual(['node', 'relay-service/src/main.ts']);
    expect(relay.readinessProbe.grpc.port).toBe(50052);
    expect(relay.livenessProbe.httpGet).toMatchObject({ path: '/healthz' });
  });

  it('lets the relay drain streams before it is killed', () => {
    const relay = find(objects(), 'Deployment', 'switchyard-relay')!;
    const grace = relay.spec.template.spec.terminationGracePeriodSeconds;
    const preStop = relay.spec.template.spec.containers[0].lifecycle.preStop.sleep.seconds;
    expect(grace).toBeGreaterThanOrEqual(60);
    expect(preStop).toBeGreaterThan(0);
    expect(grace - preStop, 'time left to drain after SIGTERM').toBeGreaterThanOrEqual(30);
  });

  it('runs every container hardened (non-root, read-only root, no capabilities, limits)', () => {
    for (const o of objects()) {
      for (const c of podContainers(o)) {
        const pod = o.spec.template.spec;
        expect(
          c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot,
          `${o.metadata.name}`,
        ).toBe(true);
        expect(c.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.resources?.requests, `${o.metadata.name} requests`).toMatchObject({
          cpu: expect.anything(),
        });
        expect(c.resources?.limits, `${o.metadata.name} limits`).toMatchObject({ memory: expect.anything() });
      }
    }
  });

  it('runs migrations as a Job', () => {
    const job = find(objects(), 'Job', 'switchyard-migrate')!;
    expect(job.spec).toMatchObject({ backoffLimit: 3, template: { spec: { restartPolicy: 'Never' } } });
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'db/scripts/migrate.ts']);
  });
});

describe('base', () => {
  const objects = () => builds.base!.objects;

  it('is namespace-agnostic', () => {
    expect(objects().filter((o) => o.metadata.namespace !== undefined || o.kind === 'Namespace')).toEqual([]);
  });

  it('has the Secret template with the three operator keys, as stringData (INTERNAL_API_SECRET is generated)', () => {
    const secret = find(objects(), 'Secret', 'switchyard-secrets')!;
    expect(Object.keys(secret.stringData).sort()).toEqual(['DATABASE_URL', 'REDIS_URL', 'SESSION_SECRET']);
    expect(secret.data).toBeUndefined();
  });

  it('scales the relay with an HPA (CPU 70%, 2-20) and keeps one pod through disruptions', () => {
    expect(find(objects(), 'HorizontalPodAutoscaler', 'switchyard-relay')!.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 20,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
        },
      ],
    });
    expect(find(objects(), 'PodDisruptionBudget', 'switchyard-relay')!.spec.minAvailable).toBe(1);
    expect(find(objects(), 'Deployment', 'switchyard-console')!.spec.replicas).toBe(2);
  });
});

describe.each(Object.keys(results))('internal gRPC trust in %s (ADR 034)', (name) => {
  const objects = () => builds[name]!.objects;
  const policies = () => objects().filter((o) => o.kind === 'NetworkPolicy');
  const labelsOf = (deployment: string) =>
    find(objects(), 'Deployment', deployment)!.spec.template.metadata.labels as Record<string, string>;
  const selects = (policy: K8sObject, labels: Record<string, string>) =>
    Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  /** The (peer, port) pairs the ingress rules of every policy selecting `deployment` allow. */
  const allowedIn = (deployment: string) =>
    policies()
      .filter((p) => p.spec.policyTypes.includes('Ingress') && selects(p, labelsOf(deployment)))
      .flatMap((p) => p.spec.ingress ?? [])
      .flatMap((rule: K8sObject) =>
        (rule.from ?? [{ any: true }]).flatMap((peer: K8sObject) =>
          (rule.ports ?? [{ port: 'any' }]).map((port: K8sObject) => {
            const who = peer.any
              ? 'anyone'
              : peer.podSelector && !peer.namespaceSelector
                ? `pod:${peer.podSelector.matchLabels['app.kubernetes.io/component']}`
                : `namespace:${peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] ?? 'any'}`;
            return `${who} -> ${port.port}`;
          }),
        ),
      )
      .sort();

  it('both Deployments read INTERNAL_API_SECRET from the generated Secret', () => {
    for (const deployment of ['switchyard-console', 'switchyard-relay']) {
      const env = container(objects(), deployment).env ?? [];
      expect(env.find((e: K8sObject) => e.name === 'INTERNAL_API_SECRET')?.valueFrom, deployment).toEqual({
        secretKeyRef: { name: 'switchyard-internal', key: 'INTERNAL_API_SECRET' },
      });
    }
  });

  it('a pre-rollout Job generates that Secret with a service account that may only create Secrets', () => {
    const job = find(objects(), 'Job', 'switchyard-internal-secret')!;
    expect(job.metadata.labels['switchyard.dev/stage']).toBe('pre-rollout');
    const pod = job.spec.template.spec;
    expect(pod.containers[0].command).toEqual(['node', 'scripts/k8s-internal-secret.ts']);
    expect(pod.serviceAccountName).toBe('switchyard-secret-init');
    expect(find(objects(), 'ServiceAccount', 'switchyard-secret-init')).toBeDefined();
    expect(find(objects(), 'Role', 'switchyard-secret-init')!.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    const binding = find(objects(), 'RoleBinding', 'switchyard-secret-init')!;
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: 'switchyard-secret-init' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'switchyard-secret-init' }]);
    // No other pod gets an API token.
    for (const o of objects().filter((x) => x.spec?.template && x !== job))
      expect(o.spec.template.spec.automountServiceAccountToken, o.metadata.name).toBe(false);
  });

  it('denies ingress to every pod of the namespace by default', () => {
    const deny = policies().filter(
      (p) =>
        Object.keys(p.spec.podSelector).length === 0 &&
        p.spec.policyTypes.includes('Ingress') &&
        (p.spec.ingress ?? []).length === 0,
    );
    expect(deny).toHaveLength(1);
  });

  it('allows only console <-> relay and the Ingress controller in, on the ports each needs', () => {
    expect(allowedIn('switchyard-console')).toEqual([
      'namespace:ingress-nginx -> 3000',
      'pod:relay -> 50051',
    ]);
    expect(allowedIn('switchyard-relay')).toEqual([
      'namespace:ingress-nginx -> 3001',
      'pod:console -> 3001',
      'pod:console -> 50052',
    ]);
    // The ports named are the containers' own.
    const ports = (d: string) => container(objects(), d).ports.map((p: K8sObject) => p.containerPort);
    expect(ports('switchyard-console')).toEqual(expect.arrayContaining([3000, 50051]));
    expect(ports('switchyard-relay')).toEqual(expect.arrayContaining([3001, 50052]));
  });

  it('limits console and relay egress to DNS, each other, PostgreSQL, Redis and HTTPS (and mail for the console)', () => {
    for (const [deployment, other, extra] of [
      ['switchyard-console', 'relay', [25, 465, 587]],
      ['switchyard-relay', 'console', []],
    ] as const) {
      const egress = policies()
        .filter((p) => p.spec.policyTypes.includes('Egress') && selects(p, labelsOf(deployment)))
        .flatMap((p) => p.spec.egress);
      expect(egress.length, deployment).toBeGreaterThan(0);
      const open = egress
        .filter((r: K8sObject) => !r.to)
        .flatMap((r: K8sObject) => r.ports.map((p: K8sObject) => p.port));
      expect(open.sort(), deployment).toEqual([443, 5432, 6379, ...extra].sort());
      const toOther = egress.find((r: K8sObject) =>
        r.to?.some((t: K8sObject) => t.podSelector?.matchLabels?.['app.kubernetes.io/component'] === other),
      );
      expect(toOther, `${deployment} -> ${other}`).toBeDefined();
      const dns = egress.find((r: K8sObject) =>
        r.to?.some((t: K8sObject) => t.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns'),
      );
      expect(dns?.ports.map((p: K8sObject) => `${p.protocol}/${p.port}`).sort()).toEqual([
        'TCP/53',
        'UDP/53',
      ]);
      // Every rule names its ports: nothing is open on every port.
      for (const rule of egress) expect(rule.ports?.length, deployment).toBeGreaterThan(0);
    }
  });
});

describe('overlays', () => {
  it('patch only objects that exist in base', () => {
    const base = builds.base!.objects;
    for (const dir of Object.values(OVERLAYS)) {
      for (const path of builds[rel(dir)]!.patchFiles) {
        for (const patch of readYamlDocs(path)) {
          expect(() => applyPatch(base, patch, rel(path)), rel(path)).not.toThrow();
        }
      }
    }
  });

  it('production: pinned image, no placeholder Secret, replica counts', () => {
    const { objects } = builds['overlays/production']!;
    for (const o of objects) {
      if (o.kind !== 'Namespace') expect(o.metadata.namespace, objectKey(o)).toBe('switchyard');
      for (const c of podContainers(o)) expect(c.image).toBe('registry.example.com/switchyard:0.1.0');
    }
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(find(objects, 'Deployment', 'switchyard-console')!.spec.replicas).toBe(3);
    expect(find(objects, 'HorizontalPodAutoscaler', 'switchyard-relay')!.spec.minReplicas).toBe(3);
    expect(find(objects, 'ConfigMap', 'switchyard-config')!.data.LOG_LEVEL).toBe('warn');
  });

  it('local: one replica each, no HPA/PDB, Secret present', () => {
    const { objects } = builds['overlays/local']!;
    expect(find(objects, 'Deployment', 'switchyard-console')!.spec.replicas).toBe(1);
    expect(find(objects, 'Deployment', 'switchyard-relay')!.spec.replicas).toBe(1);
    expect(
      objects.filter((o) => o.kind === 'HorizontalPodAutoscaler' || o.kind === 'PodDisruptionBudget'),
    ).toEqual([]);
    expect(find(objects, 'Secret', 'switchyard-secrets')!.stringData.DATABASE_URL).toMatch(/^postgres:\/\//);
    for (const o of objects) for (const c of podContainers(o)) expect(c.image).toBe('switchyard:dev');
  });
});

const objectKey = (o: K8sObject) => `${o.kind}/${o.metadata?.name}`;

describe('the checks catch broken manifests', () => {
  const broken = parseYamlDocs(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: broken
spec:
  replicas: "two"
  selector:
    matchLabels: { app: broken }
  template:
    metadata:
      labels: { app: broken }
    spec:
      containers:
        - image: switchyard:latest
          ports:
            - containerPort: 3000
`)[0]!;

  it('schema: a string where an int is required and a container without name', () => {
    expect(() => validateObject(broken)).toThrow(/replicas must be integer/);
    expect(() => validateObject(broken)).toThrow(/must have required property 'name'|required property name/);
  });

  it('schema: unknown apiVersion/kind', () => {
    expect(() =>
      validateObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    ).toThrow(/unknown apiVersion\/kind/);
  });

  it('consistency: probe on an undeclared port, Service and Ingress pointing nowhere', () => {
    const deployment = structuredClone(broken);
    deployment.spec.replicas = 1;
    deployment.spec.template.spec.containers[0].name = 'app';
    deployment.spec.template.spec.containers[0].readinessProbe = { grpc: { port: 50051 } };
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc' },
      spec: { selector: { app: 'other' }, ports: [{ name: 'http', port: 80, targetPort: 3000 }] },
    };
    const ingress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'ing' },
      spec: {
        rules: [
          {
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'svc', port: { name: 'grpc' } } },
                },
              ],
            },
          },
        ],
      },
    };
    for (const o of [deployment, service, ingress]) validateObject(o);
    const problems = consistencyProblems([deployment, service, ingress]).join('\n');
    expect(problems).toMatch(/readinessProbe port 50051 is not a declared port/);
    expect(problems).toMatch(/Service svc: selector matches no Deployment/);
    expect(problems).toMatch(/Service svc has no port grpc/);
  });

  it('kustomization: missing paths and unknown fields', () => {
    expect(
      kustomizationProblems(
        {
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: ['missing.yaml'],
          patches: [{ path: 'nope.yaml' }],
          commonLabels: { a: 'b' },
        },
        BASE,
      ),
    ).toEqual([
      'unsupported field "commonLabels" (the test renderer does not know it)',
      'resource "missing.yaml" does not exist',
      'patch "nope.yaml" does not exist',
    ]);
  });

  it('patch: a target missing from base', () => {
    const patch = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'switchyard-worker' },
      spec: { replicas: 1 },
    };
    expect(() => applyPatch(builds.base!.objects, patch, 'x.yaml')).toThrow(/matches 0 objects/);
  });
});
