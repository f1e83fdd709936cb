import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import {
  BillingServiceClient,
  type ReportUsageRequest,
  type ReportUsageResponse,
  UsageAckStatus,
  type UsageEvent,
  UsageKind,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { clientSecurity } from '@switchyard/relay/grpc/security.ts';
import { type RunningRelay, startRelay } from '@switchyard/relay/index.ts';
import { silentLogger } from '@switchyard/relay/log.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingDeps } from '#app/domain/billing/billing.server.ts';
import { checkHealth } from './health.server.ts';
import { createRelayClient, RELAY_SERVICE_NAME, RelayError } from './relay-client.server.ts';
import { BILLING_SERVICE_NAME, type RunningConsoleGrpc, startConsoleGrpc } from './server.server.ts';

const SECRET = 'grpc-test-internal-secret-0123456789abcdef';
const security = { secret: SECRET, tls: null };
let db: TestDatabase;
let options: OptionService;
let billing: BillingDeps;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'grpc' });
  options = new OptionService({ orm: db.orm, pubsub: createMemoryPubSub() });
  await options.load();
  billing = { em: () => db.orm.em.fork(), options };
});
afterAll(async () => {
  await options?.close();
  await db?.drop();
});

function callReportUsage(
  address: string,
  request: ReportUsageRequest,
): Promise<{ err: ServiceError | null; res?: ReportUsageResponse }> {
  const { credentials, options } = clientSecurity(security);
  const client = new BillingServiceClient(address, credentials, options);
  return new Promise<{ err: ServiceError | null; res?: ReportUsageResponse }>((resolve) => {
    client.reportUsage(
      request,
      new Metadata(),
      { deadline: Date.now() + 5_000 },
      (err: ServiceError | null, res?: ReportUsageResponse) => resolve({ err, res }),
    );
  }).finally(() => client.close());
}

function usageEvent(over: Partial<UsageEvent>): UsageEvent {
  return {
    requestId: '',
    userId: 0,
    tokenId: 0,
    channelIds: [],
    modelName: 'gpt-4o',
    upstreamModel: '',
    usage: undefined,
    quota: 0,
    isStream: false,
    useTimeMs: 0,
    frtMs: 0,
    group: 'default',
    otherJson: '',
    createdAtMs: Date.now(),
    ip: '',
    tokenName: '',
    kind: UsageKind.USAGE_KIND_CONSUME,
    content: '',
    ...over,
  };
}

describe('console gRPC server and relay client', () => {
  let consoleGrpc: RunningConsoleGrpc;
  let relay: RunningRelay;

  beforeAll(async () => {
    [consoleGrpc, relay] = await Promise.all([
      startConsoleGrpc({ host: '127.0.0.1', port: 0, billing, security, log: silentLogger }),
      startRelay(
        { RELAY_PORT: 0, RELAY_GRPC_PORT: 0, RELAY_INSTANCE_ID: 'console-test', INTERNAL_API_SECRET: SECRET },
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

  it('bills ReportUsage over the gRPC link, acknowledging each event in order', async () => {
    const em = db.orm.em.fork();
    const user = em.create(User, { username: 'grpc-user', affCode: 'grpc01', quota: 10_000 });
    await em.flush();
    const token = em.create(Token, { userId: user.id, key: 'g'.repeat(48), name: 'ci', remainQuota: 5000 });
    const channel = em.create(Channel, { name: 'upstream-a' });
    await em.flush();
    const events = [
      usageEvent({
        requestId: 'grpc-1',
        userId: user.id,
        tokenId: token.id,
        channelIds: [channel.id],
        quota: 1200,
        usage: {
          promptTokens: 40,
          completionTokens: 60,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 10,
          audioPromptTokens: 0,
          audioCompletionTokens: 0,
          imageTokens: 0,
        },
      }),
      usageEvent({ requestId: 'grpc-bad', userId: user.id, otherJson: '"not an object"' }),
      usageEvent({
        requestId: 'grpc-2',
        userId: user.id,
        tokenId: token.id,
        channelIds: [channel.id],
        quota: 300,
      }),
    ];

    const first = await callReportUsage(consoleGrpc.address, { events });
    expect(first.err).toBeNull();
    expect(first.res?.acks.map((a) => [a.requestId, a.status])).toEqual([
      ['grpc-1', UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED],
      ['grpc-bad', UsageAckStatus.USAGE_ACK_STATUS_REJECTED],
      ['grpc-2', UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED],
    ]);
    expect(first.res?.acks[1]?.message).toMatch(/JSON object/);

    const replay = await callReportUsage(consoleGrpc.address, { events: [events[2]!, events[0]!] });
    expect(replay.res?.acks.map((a) => a.status)).toEqual([
      UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE,
      UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE,
    ]);

    const rows = await db.orm.em
      .fork()
      .getConnection()
      .execute<{ quota: string; used_quota: string; remain_quota: string; logs: string }[]>(
        'select u.quota, u.used_quota, t.remain_quota, (select count(*) from logs where user_id = u.id) as logs ' +
          'from users u join tokens t on t.user_id = u.id where u.id = ?',
        [user.id],
      );
    expect(
      rows.map((r) => [Number(r.quota), Number(r.used_quota), Number(r.remain_quota), Number(r.logs)]),
    ).toEqual([[8500, 1500, 3500, 2]]);
  });

  it('refuses a ReportUsage batch over the size limit with INVALID_ARGUMENT', async () => {
    const events = Array.from({ length: 1001 }, (_, i) => usageEvent({ requestId: `big-${i}`, userId: 1 }));
    const { err } = await callReportUsage(consoleGrpc.address, { events });
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(err?.details).toMatch(/at most 1000 events/);
    expect(
      await db.orm.em
        .fork()
        .getConnection()
        .execute(`select 1 from usage_ledger where request_id like 'big-%'`),
    ).toEqual([]);
  });

  it('reads the relay runtime info as console types', async () => {
    const client = createRelayClient(relay.grpcAddress, { internalSecret: SECRET });
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
    const client = createRelayClient('127.0.0.1:1', { internalSecret: SECRET });
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
    const client = createRelayClient(relay.grpcAddress, { internalSecret: SECRET });
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
    const server = await startConsoleGrpc({
      host: '127.0.0.1',
      port: 0,
      billing,
      security,
      log: silentLogger,
    });
    expect(await checkHealth(server.address)).toBe('SERVING');
    await server.stop();
    const err = (await checkHealth(server.address, { timeoutMs: 1_000 }).catch((e) => e)) as ServiceError;
    expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain(err.code);
  });
});
