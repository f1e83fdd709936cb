/**
 * The Job that generates INTERNAL_API_SECRET in a cluster (k8s/base/internal-secret-job.yaml) against a fake
 * Kubernetes API server with the API's semantics for POST /api/v1/namespaces/{ns}/secrets: 201 once, 409
 * AlreadyExists after, 401 without the bearer token. The value it creates is random, long enough for the
 * console and relay to accept it, and never replaced.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseRelayConfig } from '../relay-service/src/config.ts';
import { ensureInternalSecret, INTERNAL_SECRET_NAME } from './k8s-internal-secret.ts';

const TOKEN = 'service-account-token';
const stored = new Map<string, { metadata: { name: string }; stringData: Record<string, string> }>();
let server: Server;
let apiUrl = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const m = req.url?.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets$/);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"kind":"Status","code":401}');
      return;
    }
    if (!m || req.method !== 'POST') return void res.writeHead(404).end();
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const secret = JSON.parse(body);
      const key = `${m[1]}/${secret.metadata.name}`;
      if (stored.has(key)) {
        res
          .writeHead(409, { 'content-type': 'application/json' })
          .end(JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', code: 409 }));
        return;
      }
      stored.set(key, secret);
      res.writeHead(201, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('creates the Secret once with a random INTERNAL_API_SECRET the processes accept, then keeps it', async () => {
  expect(await ensureInternalSecret({ apiUrl, token: TOKEN, namespace: 'switchyard' })).toBe('created');
  const first = stored.get(`switchyard/${INTERNAL_SECRET_NAME}`)!.stringData.INTERNAL_API_SECRET!;
  expect(first.length).toBeGreaterThanOrEqual(32);
  expect(parseRelayConfig({ INTERNAL_API_SECRET: first }).INTERNAL_API_SECRET).toBe(first);

  expect(await ensureInternalSecret({ apiUrl, token: TOKEN, namespace: 'switchyard' })).toBe('exists');
  expect(stored.get(`switchyard/${INTERNAL_SECRET_NAME}`)!.stringData.INTERNAL_API_SECRET).toBe(first);

  // Another namespace gets its own value.
  expect(await ensureInternalSecret({ apiUrl, token: TOKEN, namespace: 'staging' })).toBe('created');
  expect(stored.get(`staging/${INTERNAL_SECRET_NAME}`)!.stringData.INTERNAL_API_SECRET).not.toBe(first);
});

it('fails with the API answer when it may not create Secrets', async () => {
  await expect(ensureInternalSecret({ apiUrl, token: 'wrong', namespace: 'switchyard' })).rejects.toThrow(
    /answered 401/,
  );
});
