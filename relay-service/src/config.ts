import process from 'node:process';
import { SECRETS_KEY_FORMAT, secretsKeyProblem } from '@switchyard/db/security/secrets.ts';
import { z } from 'zod';
import { grpcSecurityEnv, tlsFilesProblem } from './grpc/security.ts';
import { DEFAULT_MAX_BODY_BYTES } from './http/body.ts';
import { trustProxyEnv } from './http/client-ip.ts';

/** Relay process configuration, validated once at start (ARCHITECTURE.md §1). */
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const optionalUrl = (pattern: RegExp, message: string) =>
  z
    .string()
    .regex(pattern, message)
    .optional()
    .or(z.literal('').transform(() => undefined));

/** The at-rest encryption keys (ADR 019): the console and the relay validate them alike. */
export const secretsEnv = {
  /** 32 random bytes (hex or base64): channel keys and secret options are stored encrypted (ADR 019). */
  SECRETS_KEY: z
    .string()
    .optional()
    .refine((v) => !v || secretsKeyProblem(v) === null, {
      message: `SECRETS_KEY ${SECRETS_KEY_FORMAT}`,
    })
    .transform((v) => v || undefined),
  /** Comma-separated earlier keys, read only (values not yet re-encrypted by `npm run secrets:rotate`). */
  SECRETS_KEY_PREVIOUS: z
    .string()
    .optional()
    .refine((v) => !v || secretsKeyProblem(v, true) === null, {
      message: `SECRETS_KEY_PREVIOUS: every key ${SECRETS_KEY_FORMAT}`,
    })
    .transform((v) => v || undefined),
};

const RelayEnv = z
  .object({
    /** Listeners bind to loopback unless told otherwise (the image and k8s set 0.0.0.0). */
    RELAY_HOST: z.string().min(1).default('127.0.0.1'),
    RELAY_PORT: port(3001),
    RELAY_GRPC_HOST: z.string().min(1).default('127.0.0.1'),
    RELAY_GRPC_PORT: port(50052),
    REDIS_URL: optionalUrl(/^rediss?:\/\//, 'REDIS_URL must be a redis:// or rediss:// URL'),
    /** Tokens, users, channels, abilities and options are read from here; without it the model API answers 503. */
    DATABASE_URL: optionalUrl(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgres:// URL'),
    DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
    /** `host:port` of the console's Billing gRPC service; without it usage stays in the outbox. */
    BILLING_GRPC_URL: z.string().min(1).optional(),
    /**
     * The service secret of every gRPC call between console and relay, both ways, and the key of the client
     * address the console forwards (ADR 015); plus the optional mutual-TLS files (ADR 034).
     */
    ...grpcSecurityEnv,
    /** How often channels, abilities and options are reloaded (they are also reloaded on invalidation). */
    RELAY_SYNC_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
    /** How long a cached token and its owner are trusted before they are read from PostgreSQL again. */
    RELAY_ACCOUNT_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
    /**
     * How long a balance loaded into the store is trusted without a console invalidation. Spending never needs
     * the reload (holds, settles and Billing acks keep it exact); only credits and edits made in the console
     * do, and the console invalidates those at once. With 10,000 active accounts a short TTL would reload
     * balances from PostgreSQL on most calls (issue 7's scale target).
     */
    RELAY_BALANCE_TTL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
    /** Longest upstream call (non-stream: whole reply; stream: between two chunks). */
    RELAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
    /**
     * Realtime backpressure (ADR 039): a WebSocket direction whose receiver has this many bytes waiting stops
     * reading its sender until the backlog halves.
     */
    RELAY_STREAM_BUFFER_BYTES: z.coerce.number().int().min(16_384).default(1_048_576),
    /** A backlog past this many bytes ends the session at once (also the largest message taken from a socket). */
    RELAY_STREAM_BUFFER_MAX_BYTES: z.coerce.number().int().min(65_536).default(16_777_216),
    /**
     * A realtime backlog that stays above RELAY_STREAM_BUFFER_BYTES this long ends the session; an HTTP stream
     * whose client takes nothing this long is ended (billed for what was produced).
     */
    RELAY_STREAM_STALL_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
    /** How long usage waits in this relay before any relay may report it for a dead instance. */
    RELAY_OUTBOX_SWEEP_AFTER_MS: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
    /**
     * Which peers are proxies whose X-Forwarded-For is believed (ADR 015): false (none), true (1 hop), a hop
     * count, or addresses/CIDR ranges/`loopback`/`private`. The console's forwarding needs none of it: it passes
     * the client address keyed with INTERNAL_API_SECRET.
     */
    TRUST_PROXY: trustProxyEnv,
    /** Largest request body, counted as it arrives whatever the framing (ADR 015). */
    RELAY_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MAX_BODY_BYTES),
    /** Test every enabled and auto-disabled channel this often (0 = only on demand); one relay at a time. */
    RELAY_CHANNEL_TEST_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
    /** Poll every enabled channel's upstream balance this often (0 = only on demand); one relay at a time. */
    RELAY_BALANCE_UPDATE_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
    /** Poll unfinished Midjourney tasks this often (new-api: 15 s; 0 = never); one relay at a time. */
    RELAY_TASK_POLL_INTERVAL_MS: z.coerce.number().int().min(0).default(15_000),
    /** An unfinished task fails (and is refunded) this long after its submit (new-api: 1 h). */
    RELAY_TASK_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(3_600_000),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    /** How long a stop waits for in-flight HTTP requests and gRPC calls before closing them. */
    RELAY_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
    ...secretsEnv,
    /** Tells replicas apart; defaults to a random id per process start. */
    RELAY_INSTANCE_ID: z.string().min(1).max(128).optional(),
  })
  .superRefine((cfg, ctx) => {
    const problem = tlsFilesProblem(cfg);
    if (problem) ctx.addIssue({ code: 'custom', path: ['GRPC_TLS_CA'], message: problem });
  });

export type RelayConfig = z.infer<typeof RelayEnv>;
/** What `RelayEnv` accepts: tests pass only the variables they care about. */
export type RelayConfigInput = z.input<typeof RelayEnv>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; throws one ConfigError naming every bad variable. */
export function loadRelayConfig(env: Record<string, string | undefined> = process.env): RelayConfig {
  return parseRelayConfig(env);
}

export function parseRelayConfig(input: RelayConfigInput | Record<string, unknown>): RelayConfig {
  const result = RelayEnv.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid relay configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
