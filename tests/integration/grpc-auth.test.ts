/**
 * Issue 23 item 3: the internal gRPC services are closed (ADR 034). Every method of both services (the console's
 * Billing, the relay's Relay; unary and server-streaming) is called with no, a wrong and the right service
 * secret; without it every call is UNAUTHENTICATED and nothing is charged, written or sent upstream. Mutual TLS
 * refuses clients without a certificate of the deployment's CA. Processes refuse to start without the secret,
 * and listen on loopback unless told otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  credentials,
  Metadata,
  type ServiceDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { HealthService } from '@switchyard/proto/grpc/health/v1/health.ts';
import {
  BillingServiceService,
  ReportUsageRequest,
  ReportUsageResponse,
  UsageAckStatus,
  UsageKind,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import {
  ChatCompletionRequest,
  RelayServiceService,
  StreamChatCompletionRequest,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import { reportUsageRequestBytes } from '@switchyard/relay/core/usage-payload.ts';
import { createBillingReporter } from '@switchyard/relay/grpc/billing-client.ts';
import { checkHealth } from '@switchyard/relay/grpc/health.ts';
import { channelCredentials, readGrpcTls } from '@switchyard/relay/grpc/security.ts';
import { type RunningRelay, startRelay } from '@switchyard/relay/index.ts';
import { silentLogger } from '@switchyard/relay/log.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient } from '#app/grpc/relay-client.server.ts';
import { type RunningConsoleGrpc, startConsoleGrpc } from '#app/grpc/server.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';
import { createTestPki, type TestPki } from './test-pki.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WRONG = 'not-the-internal-secret-0123456789abcdef';
const MODEL = 'auth-m';
const CHAT_BODY = JSON.stringify({
  model: MODEL,
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: 5,
});

type Credentials = 'none' | 'wrong' | 'right';
type Outcome = { code: number; details: string; messages: Buffer[] };
type MethodDef = { path: string; responseStream: boolean; requestStream: boolean };

/** One raw call (bytes in, bytes out) with the given authorization metadata. */
function rawCall(client: Client, method: MethodDef, request: Buffer, md: Metadata): Promise<Outcome> {
  const id = (b: Buffer) => b;
  const options = { deadline: Date.now() + 20_000 };
  return new Promise((resolve) => {
    if (!method.responseStream) {
      client.makeUnaryRequest(method.path, id, id, request, md, options, (err, res) =>
        resolve({ code: err?.code ?? status.OK, details: err?.details ?? '', messages: res ? [res] : [] }),
      );
      return;
    }
    const messages: Buffer[] = [];
    const call = client.makeServerStreamRequest(method.path, id, id, request, md, options);
    call.on('data', (m: Buffer) => messages.push(m));
    call.on('error', () => {});
    call.on('status', (s) => resolve({ code: s.code, details: s.details, messages }));
  });
}

function metadata(mode: Credentials, secret: string): Metadata {
  const md = new Metadata();
  if (mode === 'wrong') md.set('authorization', `Bearer ${WRONG}`);
  if (mode === 'right') md.set('authorization', `Bearer ${secret}`);
  return md;
}

function methodsOf(definition: ServiceDefinition): [string, MethodDef][] {
  return Object.entries(definition as unknown as Record<string, MethodDef>);
}

describe('both internal gRPC services, every method, with no / wrong / right credentials', () => {
  let fake: FakeOpenAI;
  let stack: Stack;
  let user: { id: number };
  let tokenKey = '';
  let channelId = 0;
  let billingClient: Client;
  let relayClient: Client;

  const sqlOne = async (query: string, params: unknown[] = []) =>
    (await stack.sql<Record<string, unknown>>(query, params))[0] ?? {};
  /** What a refused call must leave untouched: the balance, log rows, the ledger and the upstream. */
  const sideEffects = async () => ({
    quota: Number((await sqlOne('select quota from users where id = ?', [user.id])).quota),
    logs: Number((await sqlOne('select count(*) as n from logs')).n),
    ledger: Number((await sqlOne('select count(*) as n from usage_ledger')).n),
    upstream: fake.requests.length,
  });

  /** Requests per method: a real one where the method charges, writes or calls upstream; else empty. */
  const requestsFor = (name: string): { label: string; bytes: () => Buffer }[] => {
    switch (name) {
      case 'reportUsage':
        return [
          {
            label: 'usage event',
            bytes: () =>
              Buffer.from(
                ReportUsageRequest.encode(
                  ReportUsageRequest.fromPartial({
                    events: [
                      {
                        requestId: `auth-${randomUUID()}`,
                        userId: user.id,
                        modelName: MODEL,
                        quota: 1_000,
                        group: 'default',
                        createdAtMs: Date.now(),
                        kind: UsageKind.USAGE_KIND_CONSUME,
                      },
                    ],
                  }),
                ).finish(),
              ),
          },
        ];
      case 'chatCompletion':
      case 'streamChatCompletion': {
        const type = name === 'chatCompletion' ? ChatCompletionRequest : StreamChatCompletionRequest;
        const encode = (caller: Parameters<typeof type.fromPartial>[0]) =>
          Buffer.from(type.encode(type.fromPartial(caller)).finish());
        return [
          {
            label: "a user's own sk- key",
            bytes: () =>
              encode({
                call: { caller: { $case: 'tokenKey', tokenKey: `sk-${tokenKey}` }, bodyJson: CHAT_BODY },
              }),
          },
          {
            label: 'the console for a user (playground)',
            bytes: () =>
              encode({
                call: {
                  caller: { $case: 'service', service: { userId: user.id, group: '' } },
                  bodyJson: CHAT_BODY,
                },
              }),
          },
        ];
      }
      default:
        return [{ label: 'empty request', bytes: () => Buffer.alloc(0) }];
    }
  };

  const services = () =>
    [
      {
        service: 'switchyard.billing.v1.BillingService (console)',
        definition: BillingServiceService,
        client: billingClient,
      },
      {
        service: 'switchyard.relay.v1.RelayService (relay)',
        definition: RelayServiceService,
        client: relayClient,
      },
    ] as const;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ suffix: 'grpc_auth' });
    user = await seedUser(stack, { quota: 10_000_000 });
    tokenKey = (await seedToken(stack, user.id, { unlimited: true })).key;
    channelId = (await seedChannel(stack, { baseUrl: fake.url, models: [MODEL] })).id;
    await setOptions(stack, { ModelRatio: JSON.stringify({ [MODEL]: 1 }) });
    billingClient = new Client(stack.billing.address, credentials.createInsecure());
    relayClient = new Client(stack.relays[0]!.grpcAddress, credentials.createInsecure());
  }, 120_000);

  afterAll(async () => {
    billingClient?.close();
    relayClient?.close();
    await stack?.close();
    await fake?.close();
  });

  it('refuses every call without the service secret (UNAUTHENTICATED, nothing charged, written or relayed) and accepts it with the secret', async () => {
    expect(channelId).toBeGreaterThan(0);
    const before = await sideEffects();
    const tally = { without: 0, withoutAccepted: 0, with: 0, withRefused: 0 };
    const methods: string[] = [];
    const leaks: string[] = [];

    for (const mode of ['none', 'wrong'] as const) {
      for (const { service, definition, client } of services()) {
        for (const [name, method] of methodsOf(definition)) {
          if (mode === 'none') methods.push(`${service} ${name}${method.responseStream ? ' (stream)' : ''}`);
          for (const request of requestsFor(name)) {
            const out = await rawCall(client, method, request.bytes(), metadata(mode, stack.internalSecret));
            tally.without++;
            const refused =
              out.code === status.UNAUTHENTICATED &&
              /service credentials/.test(out.details) &&
              out.messages.length === 0;
            if (!refused) {
              tally.withoutAccepted++;
              leaks.push(
                `${service} ${name} (${request.label}) with ${mode} credentials: ${status[out.code]}`,
              );
            }
          }
        }
      }
    }
    // Every Billing and Relay method, unary and server-streaming alike.
    expect(methods.length).toBe(
      Object.keys(BillingServiceService).length + Object.keys(RelayServiceService).length,
    );
    expect(methods.some((m) => m.endsWith('(stream)'))).toBe(true);
    console.log(`gRPC calls without credentials: ${tally.without} / accepted: ${tally.withoutAccepted}`);
    expect(leaks).toEqual([]);
    await drained(stack);
    expect(await sideEffects(), 'refused calls changed nothing').toEqual(before);

    for (const { service, definition, client } of services()) {
      for (const [name, method] of methodsOf(definition)) {
        for (const request of requestsFor(name)) {
          const out = await rawCall(client, method, request.bytes(), metadata('right', stack.internalSecret));
          tally.with++;
          if (out.code === status.UNAUTHENTICATED) tally.withRefused++;
          expect(out.code, `${service} ${name} (${request.label}) with the secret: ${out.details}`).not.toBe(
            status.UNAUTHENTICATED,
          );
          if (name === 'reportUsage') {
            const res = ReportUsageResponse.decode(out.messages[0]!);
            expect(res.acks.map((a) => a.status)).toEqual([UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED]);
          }
          if (name === 'chatCompletion' || name === 'streamChatCompletion')
            expect(out.code, `${name} (${request.label}): ${out.details}`).toBe(status.OK);
        }
      }
    }
    await drained(stack);
    const after = await sideEffects();
    expect(after.quota).toBeLessThan(before.quota);
    expect(after.upstream).toBeGreaterThan(before.upstream);
    expect(after.logs).toBeGreaterThan(before.logs);

    console.log(
      `gRPC calls with credentials: ${tally.with} / refused: ${tally.withRefused} (${methods.length} methods)`,
    );
    expect(tally.withoutAccepted).toBe(0);
    expect(tally.withRefused).toBe(0);
  }, 120_000);

  it('leaves the standard health service open (Kubernetes gRPC probes send no metadata)', async () => {
    for (const { client } of services()) {
      const out = await rawCall(client, HealthService.check, Buffer.alloc(0), new Metadata());
      expect(out.code).toBe(status.OK);
    }
  });

  it('the typed clients carry the secret on every call (console -> relay, relay -> Billing)', async () => {
    const relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: stack.internalSecret });
    const wrong = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: WRONG });
    const billing = createBillingReporter(stack.billing.address, { secret: stack.internalSecret, tls: null });
    const wrongBilling = createBillingReporter(stack.billing.address, { secret: WRONG, tls: null });
    try {
      expect((await relay.getRuntimeInfo()).runtime).toBe('node');
      expect((await relay.listChannelTypes()).length).toBeGreaterThan(0);
      await expect(wrong.getRuntimeInfo()).rejects.toMatchObject({ code: 'unauthenticated' });
      await expect(wrong.listChannelTypes()).rejects.toMatchObject({ code: 'unauthenticated' });
      const none = reportUsageRequestBytes([]);
      expect(none.length).toBe(0);
      await expect(billing.report([], 5_000)).resolves.toEqual([]);
      await expect(wrongBilling.report([], 5_000)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    } finally {
      relay.close();
      wrong.close();
      billing.close();
      wrongBilling.close();
    }
  });
});

describe('mutual TLS (GRPC_TLS_CA / GRPC_TLS_CERT / GRPC_TLS_KEY)', () => {
  const SECRET = 'mtls-internal-secret-0123456789abcdef';
  let pki: TestPki;
  let billing: RunningConsoleGrpc;
  let relay: RunningRelay;
  let relayFiles: { ca: string; cert: string; key: string };
  let consoleFiles: { ca: string; cert: string; key: string };

  beforeAll(async () => {
    pki = await createTestPki();
    consoleFiles = await pki.issue('console');
    relayFiles = await pki.issue('relay');
    const consoleTls = readGrpcTls({
      GRPC_TLS_CA: consoleFiles.ca,
      GRPC_TLS_CERT: consoleFiles.cert,
      GRPC_TLS_KEY: consoleFiles.key,
    });
    billing = await startConsoleGrpc({
      host: '127.0.0.1',
      port: 0,
      billing: { em: () => never(), options: never() },
      security: { secret: SECRET, tls: consoleTls },
      log: silentLogger,
    });
    relay = await startRelay(
      {
        RELAY_PORT: 0,
        RELAY_GRPC_PORT: 0,
        RELAY_DRAIN_TIMEOUT_MS: 1_000,
        INTERNAL_API_SECRET: SECRET,
        GRPC_TLS_CA: relayFiles.ca,
        GRPC_TLS_CERT: relayFiles.cert,
        GRPC_TLS_KEY: relayFiles.key,
      },
      { log: silentLogger },
    );
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await billing?.stop(0);
    pki?.close();
  });

  const tlsOf = (files: { ca: string; cert: string; key: string }) =>
    readGrpcTls({ GRPC_TLS_CA: files.ca, GRPC_TLS_CERT: files.cert, GRPC_TLS_KEY: files.key });

  it('accepts a client with a certificate of the CA (and the secret), refuses one without or with a foreign one', async () => {
    const tls = tlsOf(consoleFiles);
    const foreign = tlsOf(await pki.issueForeign('intruder'));
    const ok = createRelayClient(relay.grpcAddress, { internalSecret: SECRET, tls });
    expect((await ok.getRuntimeInfo({ timeoutMs: 5_000 })).runtime).toBe('node');
    expect(await ok.health()).toBe('SERVING');
    ok.close();

    const attempts: [string, ReturnType<typeof createRelayClient>][] = [
      // The server's certificate verifies, but the client presents none.
      [
        'no client certificate',
        createRelayClientWith(relay.grpcAddress, credentials.createSsl(tls!.ca), SECRET),
      ],
      [
        'a certificate of another CA',
        createRelayClient(relay.grpcAddress, { internalSecret: SECRET, tls: foreign }),
      ],
      ['plaintext', createRelayClient(relay.grpcAddress, { internalSecret: SECRET })],
    ];
    for (const [label, client] of attempts) {
      const err = await client.getRuntimeInfo({ timeoutMs: 3_000 }).catch((e: unknown) => e);
      expect((err as { code?: string }).code, label).toMatch(/^(unavailable|deadline_exceeded)$/);
      client.close();
    }
    // The right certificate does not replace the secret.
    const noSecret = createRelayClient(relay.grpcAddress, { internalSecret: WRONG, tls });
    await expect(noSecret.getRuntimeInfo({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    noSecret.close();
  });

  it('the relay reports to a mutual-TLS Billing with its certificate; without one it is refused', async () => {
    const withCert = createBillingReporter(billing.address, { secret: SECRET, tls: tlsOf(relayFiles) });
    await expect(withCert.report([], 5_000)).resolves.toEqual([]);
    withCert.close();
    expect(await checkHealth(billing.address, { credentials: channelCredentials(tlsOf(relayFiles)) })).toBe(
      'SERVING',
    );
    const plain = createBillingReporter(billing.address, { secret: SECRET, tls: null });
    await expect(plain.report([], 3_000)).rejects.toMatchObject({
      code: expect.toSatisfy((c: number) => c === status.UNAVAILABLE || c === status.DEADLINE_EXCEEDED),
    });
    plain.close();
  });
});

describe('start-up and listeners', () => {
  function run(
    args: string[],
    env: Record<string, string>,
  ): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child: ChildProcess = spawn(process.execPath, args, {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...env,
        } as unknown as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (c) => (output += c));
      child.stderr?.on('data', (c) => (output += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  }

  it('console and relay refuse to start in production without INTERNAL_API_SECRET (or with a short one), naming it', async () => {
    const base = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
      PORT: '0',
      CONSOLE_GRPC_PORT: '0',
      RELAY_PORT: '0',
      RELAY_GRPC_PORT: '0',
    };
    const runs = await Promise.all([
      run(['scripts/serve-console.ts'], base),
      run(['relay-service/src/main.ts'], base),
      run(['scripts/serve-console.ts'], { ...base, INTERNAL_API_SECRET: 'too-short' }),
      run(['relay-service/src/main.ts'], { ...base, INTERNAL_API_SECRET: 'too-short' }),
    ]);
    for (const r of runs) {
      expect(r.code, r.output).not.toBe(0);
      expect(r.output).toMatch(/INTERNAL_API_SECRET is (required|too short): at least 32 characters/);
    }
  }, 60_000);

  it('listens on loopback by default: not reachable on the machine’s other addresses', async () => {
    const relay = await startRelay(
      { RELAY_PORT: 0, RELAY_GRPC_PORT: 0, RELAY_DRAIN_TIMEOUT_MS: 500, INTERNAL_API_SECRET: WRONG },
      { log: silentLogger },
    );
    try {
      expect(relay.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(relay.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && !a.internal && a.family === 'IPv4')
        .map((a) => a!.address);
      for (const address of others) {
        for (const port of [Number(relay.grpcAddress.split(':')[1]), Number(new URL(relay.httpUrl).port)]) {
          const reached = await new Promise<boolean>((resolve) => {
            const socket = connect({ host: address, port, timeout: 2_000 });
            socket.once('connect', () => {
              socket.destroy();
              resolve(true);
            });
            socket.once('error', () => resolve(false));
            socket.once('timeout', () => {
              socket.destroy();
              resolve(false);
            });
          });
          expect(reached, `${address}:${port}`).toBe(false);
        }
      }
    } finally {
      await relay.stop();
    }
  });
});

/** A relay client on explicit channel credentials (a TLS client without a certificate). */
function createRelayClientWith(
  address: string,
  creds: ReturnType<typeof credentials.createSsl>,
  secret: string,
) {
  const client = new Client(address, creds);
  const md = new Metadata();
  md.set('authorization', `Bearer ${secret}`);
  return {
    getRuntimeInfo: (opts: { timeoutMs: number }) =>
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          RelayServiceService.getRuntimeInfo.path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          md,
          { deadline: Date.now() + opts.timeoutMs },
          (err: ServiceError | null, res?: Buffer) =>
            err
              ? reject({
                  code:
                    err.code === status.UNAVAILABLE
                      ? 'unavailable'
                      : err.code === status.DEADLINE_EXCEEDED
                        ? 'deadline_exceeded'
                        : String(err.code),
                })
              : resolve(res),
        ),
      ),
    close: () => client.close(),
  } as unknown as ReturnType<typeof createRelayClient>;
}

/** Billing deps a test server never reaches (its calls are refused or carry no events). */
function never(): never {
  return new Proxy(
    {},
    {
      get: () => {
        throw new Error('not used');
      },
    },
  ) as never;
}
