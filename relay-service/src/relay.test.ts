import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthClient,
} from '@switchyard/proto/grpc/health/v1/health.ts';
import {
  type GetRuntimeInfoResponse,
  type ListChannelTypesResponse,
  RelayServiceClient,
  Runtime,
  StoreMode,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from './grpc/health.ts';
import { clientSecurity } from './grpc/security.ts';
import { RELAY_SERVICE_NAME } from './grpc/server.ts';
import { type RunningRelay, startRelay } from './index.ts';
import { silentLogger } from './log.ts';
import { ADAPTORS } from './providers/registry.ts';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = 'relay-test-internal-secret-0123456789abcdef';
const base = {
  RELAY_PORT: 0,
  RELAY_GRPC_PORT: 0,
  RELAY_DRAIN_TIMEOUT_MS: 2_000,
  INTERNAL_API_SECRET: SECRET,
};
/** A raw client carrying the console's service secret (security.ts). */
const consoleClient = (address: string) => {
  const { credentials, options } = clientSecurity({ secret: SECRET, tls: null });
  return new RelayServiceClient(address, credentials, options);
};

function getRuntimeInfo(address: string, timeoutMs = 2_000): Promise<GetRuntimeInfoResponse> {
  const client = consoleClient(address);
  return new Promise<GetRuntimeInfoResponse>((resolve, reject) => {
    client.getRuntimeInfo({}, new Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  }).finally(() => client.close());
}

function listChannelTypes(address: string): Promise<ListChannelTypesResponse> {
  const client = consoleClient(address);
  return new Promise<ListChannelTypesResponse>((resolve, reject) => {
    client.listChannelTypes({}, new Metadata(), { deadline: Date.now() + 2_000 }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  }).finally(() => client.close());
}

describe('relay with the in-process store', () => {
  let relay: RunningRelay;
  beforeAll(async () => {
    relay = await startRelay({ ...base, RELAY_INSTANCE_ID: 'relay-test-1' }, { log: silentLogger });
  });
  afterAll(() => relay.stop());

  it('answers /healthz and /readyz', async () => {
    const health = await fetch(`${relay.httpUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${relay.httpUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', store: 'memory' });
  });

  it("answers unknown paths with 404 in OpenAI's error shape", async () => {
    const res = await fetch(`${relay.httpUrl}/x?y=1`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({
      error: { message: 'Invalid URL (GET /x)', type: 'invalid_request_error', param: null, code: null },
    });
    const post = await fetch(`${relay.httpUrl}/v1/nothing`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { message: string } }).error.message).toBe(
      'Invalid URL (POST /v1/nothing)',
    );
  });

  it('serves the standard gRPC health service', async () => {
    expect(await checkHealth(relay.grpcAddress)).toBe('SERVING');
    expect(await checkHealth(relay.grpcAddress, { service: RELAY_SERVICE_NAME })).toBe('SERVING');
    await expect(checkHealth(relay.grpcAddress, { service: 'nope.v1.Nope' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
  });

  it('answers GetRuntimeInfo through the generated client', async () => {
    const before = Math.floor(Date.now() / 1000);
    const info = await getRuntimeInfo(relay.grpcAddress);
    expect(info).toEqual({
      version: expect.stringMatching(/^v\d+\.\d+\.\d+/),
      startedAt: expect.any(Number),
      runtime: Runtime.RUNTIME_NODE,
      runtimeVersion: process.versions.node,
      storeMode: StoreMode.STORE_MODE_MEMORY,
      instanceId: 'relay-test-1',
    });
    expect(info.startedAt).toBeGreaterThan(before - 60);
    expect(info.startedAt).toBeLessThanOrEqual(before);
  });

  it('answers ListChannelTypes: every adaptor type and the task types, ascending, even without a database', async () => {
    const { types } = await listChannelTypes(relay.grpcAddress);
    const ids = types.map((t) => t.type);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const by = Object.fromEntries(types.map((t) => [t.type, t.servedBy]));
    expect(by).toMatchObject({
      1: 'openai',
      2: 'midjourney',
      3: 'azure',
      5: 'midjourney',
      11: 'palm',
      14: 'anthropic',
      21: 'aiproxy',
      24: 'gemini',
      36: 'suno',
      37: 'dify',
    });
    for (const adaptor of ADAPTORS)
      for (const type of adaptor.channelTypes) expect(by[type]).toBe(adaptor.id);
    expect(ids).toHaveLength(ADAPTORS.flatMap((a) => a.channelTypes).length + 3);
  });
});

describe('relay with Redis', () => {
  it('reports the redis store mode and readiness', async () => {
    const relay = await startRelay(
      { ...base, REDIS_URL: redisUrl },
      { log: silentLogger, keyPrefix: `test:${process.pid}:` },
    );
    try {
      expect(relay.store.mode).toBe('redis');
      const ready = await fetch(`${relay.httpUrl}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ok', store: 'redis' });
      expect((await getRuntimeInfo(relay.grpcAddress)).storeMode).toBe(StoreMode.STORE_MODE_REDIS);
      expect(relay.info.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await relay.stop();
    }
  });

  it('starts not-ready while Redis is unreachable', async () => {
    const relay = await startRelay(
      { ...base, REDIS_URL: 'redis://127.0.0.1:1' },
      { log: silentLogger, storeWaitMs: 200 },
    );
    try {
      expect((await fetch(`${relay.httpUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${relay.httpUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', store: 'redis' });
    } finally {
      await relay.stop();
    }
  });
});

describe('graceful stop', () => {
  it('reports NOT_SERVING to watchers, then stops accepting HTTP and gRPC', async () => {
    const relay = await startRelay(base, { log: silentLogger });
    const client = new HealthClient(relay.grpcAddress, credentials.createInsecure());
    const seen: HealthCheckResponse_ServingStatus[] = [];
    const watch = client.watch(HealthCheckRequest.fromPartial({ service: '' }));
    const ended = new Promise<void>((resolve) => {
      watch.on('data', (res: HealthCheckResponse) => seen.push(res.status));
      watch.on('end', () => resolve());
      watch.on('error', () => resolve());
    });
    await waitFor(() => seen.length === 1);

    await relay.stop();
    await ended;
    client.close();
    expect(seen).toEqual([
      HealthCheckResponse_ServingStatus.SERVING,
      HealthCheckResponse_ServingStatus.NOT_SERVING,
    ]);

    await expect(fetch(`${relay.httpUrl}/healthz`)).rejects.toThrow();
    const err = (await checkHealth(relay.grpcAddress, { timeoutMs: 1_000 }).catch((e) => e)) as ServiceError;
    expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain(err.code);
    await relay.stop(); // idempotent
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 2_000) {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
