import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  BillingServiceClient,
  type ReportUsageResponse,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { type RunningRelay, startRelay } from '@switchyard/relay/index.ts';
import { silentLogger } from '@switchyard/relay/log.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from './health.server.ts';
import { createRelayClient, RELAY_SERVICE_NAME, RelayError } from './relay-client.server.ts';
import { BILLING_SERVICE_NAME, type RunningConsoleGrpc, startConsoleGrpc } from './server.server.ts';

describe('console gRPC server and relay client', () => {
  let consoleGrpc: RunningConsoleGrpc;
  let relay: RunningRelay;

  beforeAll(async () => {
    [consoleGrpc, relay] = await Promise.all([
      startConsoleGrpc({ host: '127.0.0.1', port: 0, log: silentLogger }),
      startRelay(
        { RELAY_PORT: 0, RELAY_GRPC_PORT: 0, RELAY_INSTANCE_ID: 'console-test' },
        { log: silentLogger },
      ),
    ]);
  });
  afterAll(async () => {
    await Promise.all([consoleGrpc?.stop(), relay?.stop()]);
  });

  it('serves health on both processes', async () => {
    expect(await checkHealth(consoleGrpc.address)).toBe('SERVING');
    expect(await checkHealth(consoleGrpc.address, { service: BILLING_SERVICE_NAME })).toBe('SERVING');
    expect(await checkHealth(relay.grpcAddress)).toBe('SERVING');
    expect(await checkHealth(relay.grpcAddress, { service: RELAY_SERVICE_NAME })).toBe('SERVING');
  });

  it('answers ReportUsage with UNIMPLEMENTED until billing lands', async () => {
    const client = new BillingServiceClient(consoleGrpc.address, credentials.createInsecure());
    const err = await new Promise<ServiceError | null>((resolve) => {
      client.reportUsage(
        { events: [] },
        new Metadata(),
        { deadline: Date.now() + 2_000 },
        (e: ServiceError | null, _res?: ReportUsageResponse) => resolve(e),
      );
    });
    client.close();
    expect(err?.code).toBe(status.UNIMPLEMENTED);
    expect(err?.details).toMatch(/billing is not enabled yet/);
  });

  it('reads the relay runtime info as console types', async () => {
    const client = createRelayClient(relay.grpcAddress);
    try {
      const info = await client.getRuntimeInfo({ timeoutMs: 2_000 });
      expect(info).toEqual({
        version: relay.info.version,
        startedAt: relay.info.startedAt,
        runtime: 'node',
        runtimeVersion: process.versions.node,
        storeMode: 'memory',
        instanceId: 'console-test',
      });
      expect(await client.health()).toBe('SERVING');
    } finally {
      client.close();
    }
  });

  it('fails with RelayError("unavailable") when no relay listens', async () => {
    const client = createRelayClient('127.0.0.1:1');
    try {
      const err = await client.getRuntimeInfo({ timeoutMs: 1_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RelayError);
      expect(['unavailable', 'deadline_exceeded']).toContain((err as RelayError).code);
      await expect(client.health({ timeoutMs: 1_000 })).rejects.toBeInstanceOf(RelayError);
    } finally {
      client.close();
    }
  });

  it('cancels a call when its signal aborts', async () => {
    const client = createRelayClient(relay.grpcAddress);
    try {
      const controller = new AbortController();
      controller.abort();
      await expect(client.getRuntimeInfo({ signal: controller.signal })).rejects.toMatchObject({
        code: 'cancelled',
      });
    } finally {
      client.close();
    }
  });
});

describe('console gRPC stop', () => {
  it('stops serving health', async () => {
    const server = await startConsoleGrpc({ host: '127.0.0.1', port: 0, log: silentLogger });
    expect(await checkHealth(server.address)).toBe('SERVING');
    await server.stop();
    const err = (await checkHealth(server.address, { timeoutMs: 1_000 }).catch((e) => e)) as ServiceError;
    expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain(err.code);
  });
});
