/**
 * Creates the Secret `switchyard-internal` with a random INTERNAL_API_SECRET if it does not exist yet (ADR 034),
 * run by the Job `switchyard-internal-secret` of the k8s base before the Deployments roll out. It only ever
 * creates: an existing Secret (an earlier run, or one the operator made) is kept, so the value survives every
 * `kubectl apply`. In the pod it talks to the API server with its service-account token; the Job sets
 * NODE_EXTRA_CA_CERTS to the cluster CA so fetch trusts it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const INTERNAL_SECRET_NAME = 'switchyard-internal';

/** POSTs the Secret; 201 = created, 409 AlreadyExists = kept. Anything else throws with the API's answer. */
export async function ensureInternalSecret(opts: {
  apiUrl: string;
  token: string;
  namespace: string;
  name?: string;
  fetch?: typeof fetch;
}): Promise<'created' | 'exists'> {
  const name = opts.name ?? INTERNAL_SECRET_NAME;
  const res = await (opts.fetch ?? fetch)(
    `${opts.apiUrl}/api/v1/namespaces/${encodeURIComponent(opts.namespace)}/secrets`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          labels: { 'app.kubernetes.io/name': 'switchyard', 'app.kubernetes.io/part-of': 'switchyard' },
        },
        type: 'Opaque',
        stringData: { INTERNAL_API_SECRET: randomBytes(32).toString('base64url') },
      }),
    },
  );
  if (res.status === 201) return 'created';
  if (res.status === 409) return 'exists';
  throw new Error(`creating Secret ${opts.namespace}/${name} answered ${res.status}: ${await res.text()}`);
}

if (import.meta.main) {
  const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '443';
  try {
    if (!host) throw new Error('KUBERNETES_SERVICE_HOST is not set: this runs inside a Kubernetes pod');
    const result = await ensureInternalSecret({
      apiUrl: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      token: readFileSync(`${sa}/token`, 'utf8').trim(),
      namespace: readFileSync(`${sa}/namespace`, 'utf8').trim(),
    });
    console.log(
      result === 'created'
        ? `[secrets] created Secret ${INTERNAL_SECRET_NAME} with a random INTERNAL_API_SECRET`
        : `[secrets] Secret ${INTERNAL_SECRET_NAME} exists: kept`,
    );
  } catch (err) {
    console.error(`[secrets] ${(err as Error).message}`);
    process.exit(1);
  }
}
