/**
 * A whole billing loop for integration tests: an isolated PostgreSQL database with migrations, the console's
 * Billing gRPC service on it, relay instances (in-process, real HTTP and gRPC, real Redis when asked) and the
 * fake OpenAI upstream. Seeding helpers insert users, tokens, channels and abilities the way the console does.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { createSecretBox, type SecretBox } from '@switchyard/db/security/secrets.ts';
import {
  createTestDatabase,
  type TestDatabase,
  testRedisPrefix,
  testRedisUrl,
} from '@switchyard/db/testing.ts';
import { type RunningRelay, startRelay } from '@switchyard/relay';
import { createLogger, silentLogger } from '@switchyard/relay/log.ts';
import type { BillingDeps } from '#app/domain/billing/billing.server.ts';
import { type RunningConsoleGrpc, startConsoleGrpc } from '#app/grpc/server.server.ts';

/** The stack's service secret (console <-> relay gRPC, ADR 034) unless `env.INTERNAL_API_SECRET` names one. */
export const STACK_INTERNAL_SECRET = 'relay-stack-internal-secret-0123456789';

export type Stack = {
  db: TestDatabase;
  /** The service secret Billing checks and every relay carries (and checks on RelayService calls). */
  internalSecret: string;
  orm: MikroORM;
  billing: RunningConsoleGrpc;
  relays: RunningRelay[];
  options: OptionService;
  /** The console side's box (SECRETS_KEY of the stack; plaintext without one). */
  secrets: SecretBox;
  /** Starts one more relay on the same database (and Redis when the stack uses it); `env` adds to the stack's. */
  addRelay(env?: Record<string, string>): Promise<RunningRelay>;
  /** Restarts the Billing gRPC server on the same port (after stopBilling). */
  startBilling(): Promise<void>;
  stopBilling(): Promise<void>;
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
};

export type StackOptions = {
  suffix: string;
  /** Use the machine's Redis (shared store); otherwise each relay has its in-process store. */
  redis?: boolean;
  relays?: number;
  /** Relay env overrides. */
  env?: Record<string, string>;
  /** SECRETS_KEY of the console side and of every relay. */
  secretsKey?: string;
  /** Billing's receiver of quota warnings (none by default). */
  quotaWarnings?: BillingDeps['quotaWarnings'];
};

export async function startStack(opts: StackOptions): Promise<Stack> {
  const db = await createTestDatabase({ suffix: opts.suffix, poolMax: 10 });
  const pubsub = createMemoryPubSub();
  const secrets = await createSecretBox({ key: opts.secretsKey ?? null });
  const options = new OptionService({ orm: db.orm, pubsub, secrets });
  await options.load();
  const billingDeps: BillingDeps = {
    em: () => db.orm.em.fork(),
    options,
    ...(opts.quotaWarnings ? { quotaWarnings: opts.quotaWarnings } : {}),
  };
  const internalSecret = opts.env?.INTERNAL_API_SECRET ?? STACK_INTERNAL_SECRET;
  const security = { secret: internalSecret, tls: null };
  let billing = await startConsoleGrpc({
    host: '127.0.0.1',
    port: 0,
    billing: billingDeps,
    security,
    log: silentLogger,
  });
  const billingAddress = billing.address;
  const keyPrefix = `${testRedisPrefix()}${opts.suffix}:${Date.now()}:`;
  const relays: RunningRelay[] = [];

  const addRelay = async (env: Record<string, string> = {}) => {
    const relay = await startRelay(
      {
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: 0,
        RELAY_GRPC_PORT: 0,
        DATABASE_URL: db.url,
        DATABASE_POOL_MAX: 4,
        BILLING_GRPC_URL: billingAddress,
        INTERNAL_API_SECRET: internalSecret,
        RELAY_OUTBOX_SWEEP_AFTER_MS: 1_000,
        RELAY_SYNC_INTERVAL_MS: 60_000,
        ...(opts.redis ? { REDIS_URL: testRedisUrl() } : {}),
        ...(opts.secretsKey ? { SECRETS_KEY: opts.secretsKey } : {}),
        ...opts.env,
        ...env,
      },
      { log: process.env.STACK_LOG ? createLogger('debug') : silentLogger, keyPrefix },
    );
    relays.push(relay);
    return relay;
  };
  for (let i = 0; i < (opts.relays ?? 1); i++) await addRelay();

  const sql = async <T>(query: string, params: unknown[] = []) =>
    (await db.orm.em.getConnection().execute(query, params, 'all')) as T[];

  return {
    db,
    internalSecret,
    orm: db.orm,
    get billing() {
      return billing;
    },
    relays,
    options,
    secrets,
    addRelay,
    async stopBilling() {
      await billing.stop(0);
    },
    async startBilling() {
      const port = Number(billingAddress.split(':').pop());
      billing = await startConsoleGrpc({
        host: '127.0.0.1',
        port,
        billing: billingDeps,
        security,
        log: silentLogger,
      });
    },
    sql,
    async close() {
      await Promise.all(relays.map((r) => r.stop()));
      await billing.stop(0).catch(() => {});
      await options.close();
      await db.drop();
    },
  };
}

export type SeedUser = { id: number; username: string };

let seq = 0;
const unique = () => `${Date.now().toString(36)}${(seq++).toString(36)}`;

export async function seedUser(
  stack: Stack,
  fields: { quota: number; group?: string; role?: number; status?: number },
) {
  const username = `u${unique()}`.slice(0, 20);
  const [row] = await stack.sql<{ id: number }>(
    `insert into users (username, display_name, aff_code, "group", quota, role, status, password_hash, setting, email)
     values (?, ?, ?, ?, ?, ?, ?, '', '', '') returning id`,
    [
      username,
      username,
      username,
      fields.group ?? 'default',
      fields.quota,
      fields.role ?? 1,
      fields.status ?? 1,
    ],
  );
  return { id: Number(row?.id), username };
}

export async function seedToken(
  stack: Stack,
  userId: number,
  fields: {
    remainQuota?: number;
    unlimited?: boolean;
    group?: string;
    modelLimits?: string[];
    allowIps?: string;
    status?: number;
    expiredTime?: number;
  } = {},
): Promise<{ id: number; key: string }> {
  const key = `t${unique()}${crypto.randomUUID().replaceAll('-', '')}`.slice(0, 48);
  const [row] = await stack.sql<{ id: number }>(
    `insert into tokens (user_id, key, name, status, remain_quota, used_quota, unlimited_quota, expired_time,
       created_time, accessed_time, model_limits_enabled, model_limits, allow_ips, "group")
     values (?, ?, ?, ?, ?, 0, ?, ?, 0, 0, ?, ?, ?, ?) returning id`,
    [
      userId,
      key,
      `token-${key.slice(0, 6)}`,
      fields.status ?? 1,
      fields.remainQuota ?? 0,
      fields.unlimited ?? false,
      fields.expiredTime ?? -1,
      (fields.modelLimits?.length ?? 0) > 0,
      (fields.modelLimits ?? []).join(','),
      fields.allowIps ?? '',
      fields.group ?? '',
    ],
  );
  return { id: Number(row?.id), key };
}

export async function seedChannel(
  stack: Stack,
  fields: {
    baseUrl: string;
    models: string[];
    type?: number;
    key?: string;
    groups?: string[];
    priority?: number;
    weight?: number;
    modelMapping?: Record<string, string>;
    statusCodeMapping?: Record<string, string>;
    other?: string;
    autoBan?: boolean;
    name?: string;
    status?: number;
  },
): Promise<{ id: number }> {
  const groups = fields.groups ?? ['default'];
  const [row] = await stack.sql<{ id: number }>(
    `insert into channels (type, name, key, base_url, other, model_mapping, status_code_mapping, setting, models,
       "group", auto_ban, test_model, priority, weight, status, response_time, used_quota, balance,
       balance_updated_time, created_time, test_time, other_info, max_input_tokens)
     values (?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, '', ?, ?, ?, 0, 0, 0, 0, 0, 0, '', 0) returning id`,
    [
      fields.type ?? 1,
      fields.name ?? `channel-${unique()}`,
      fields.key ?? 'sk-upstream-key',
      fields.baseUrl,
      fields.other ?? '',
      fields.modelMapping ? JSON.stringify(fields.modelMapping) : '',
      fields.statusCodeMapping ? JSON.stringify(fields.statusCodeMapping) : '',
      fields.models.join(','),
      groups.join(','),
      fields.autoBan === false ? 0 : 1,
      fields.priority ?? 0,
      fields.weight ?? 0,
      fields.status ?? 1,
    ],
  );
  const id = Number(row?.id);
  for (const g of groups)
    for (const m of fields.models)
      await stack.sql(
        `insert into abilities ("group", model, channel_id, enabled, priority, weight) values (?, ?, ?, ?, ?, ?)`,
        [g, m, id, (fields.status ?? 1) === 1, fields.priority ?? 0, fields.weight ?? 0],
      );
  return { id };
}

/** Sets options in the database and makes every relay of the stack reload them and the routing table. */
export async function setOptions(stack: Stack, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values))
    await stack.sql(
      `insert into options (key, value) values (?, ?) on conflict (key) do update set value = excluded.value`,
      [key, value],
    );
  await stack.options.load();
  await reload(stack);
}

/** Reloads channels, abilities and options in every relay (what the console's invalidation does). */
export async function reload(stack: Stack): Promise<void> {
  await Promise.all(stack.relays.map((r) => r.pipeline?.invalidate([], [], true)));
}

/** Waits until Billing has committed every settled call (the outbox is drained on every relay). */
export async function drained(stack: Stack, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await Promise.all(stack.relays.map((r) => r.pipeline?.outbox.flush()));
    const pending = await Promise.all(stack.relays.map((r) => r.store.outboxPending(Date.now() + 60_000, 1)));
    if (pending.every((p) => p.length === 0)) return;
    if (Date.now() > deadline) throw new Error('usage was not billed in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The newest log row of `userId` for `model`, after every settled call has been billed. */
export async function lastLogOf(
  stack: Stack,
  userId: number,
  model: string,
): Promise<Record<string, unknown>> {
  await drained(stack);
  const [row] = await stack.sql<Record<string, unknown>>(
    `select * from logs where user_id = ? and model_name = ? order by id desc limit 1`,
    [userId, model],
  );
  if (!row) throw new Error(`no log row for user ${userId} and model ${model}`);
  return row;
}
