import { secretsEnv } from '@switchyard/relay/config.ts';
import { grpcSecurityEnv, tlsFilesProblem } from '@switchyard/relay/grpc/security.ts';
import { DEFAULT_MAX_BODY_BYTES } from '@switchyard/relay/http/body.ts';
import { trustProxyEnv } from '@switchyard/relay/http/client-ip.ts';
import { z } from 'zod';

/** `scheme://host[:port]` (http/https, nothing after the authority but an optional `/`), normalised; else null. */
function parseOrigin(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return null;
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(entry)) return null;
  return url.origin;
}

/** Console process configuration, validated once at start (ARCHITECTURE.md §1). */
const ConsoleEnv = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
    /** Listeners bind to loopback unless told otherwise (the image and k8s set 0.0.0.0). */
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    CONSOLE_GRPC_HOST: z.string().min(1).default('127.0.0.1'),
    CONSOLE_GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50051),
    DATABASE_URL: z
      .string({
        error: 'DATABASE_URL is required (npm start provides an embedded PostgreSQL when it is unset)',
      })
      .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgres:// URL'),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'REDIS_URL must be a redis:// or rediss:// URL')
      .optional()
      .or(z.literal('').transform(() => undefined)),
    RELAY_URL: z.url().default('http://127.0.0.1:3001'),
    RELAY_GRPC_URL: z.string().min(1).default('127.0.0.1:50052'),
    SESSION_SECRET: z.string().min(16, 'SESSION_SECRET must be at least 16 characters').optional(),
    /**
     * The service secret of every gRPC call between console and relay, both ways (the relay's value), and the
     * key of the client address forwarded to the relay; plus the optional mutual-TLS files (ADR 034).
     */
    ...grpcSecurityEnv,
    /** The relay's body limit: forwarded model API calls are cut off above it (the relay has the same variable). */
    RELAY_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MAX_BODY_BYTES),
    /** Which peers are proxies whose X-Forwarded-For is believed: false, true (1 hop), a hop count, or a list. */
    TRUST_PROXY: trustProxyEnv,
    /**
     * Largest request body of a page action or /api call, counted as it arrives (ADR 015). 8 MiB is far above
     * any console form or JSON body (options, batch channel keys); relay paths have the relay's own limit.
     */
    MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(8 * 1024 * 1024),
    /**
     * Origins besides the console's own whose pages may submit changes (ADR 016): comma-separated
     * `scheme://host[:port]`, for a console behind a proxy that rewrites Host or sibling front ends.
     */
    TRUSTED_ORIGINS: z
      .string()
      .default('')
      .transform((value, ctx) => {
        const origins: string[] = [];
        for (const entry of value.split(',').map((e) => e.trim())) {
          if (!entry) continue;
          const origin = parseOrigin(entry);
          if (origin) origins.push(origin);
          else
            ctx.addIssue({
              code: 'custom',
              message: `"${entry}" is not an origin: use scheme://host[:port] (http or https, no path)`,
            });
        }
        return origins;
      }),
    /** GitHub "latest release" JSON asked by the settings page's update check (tests point it at a fake). */
    /** GitHub-style "latest release" JSON for the settings' update check; unset: the check says it is not configured. */
    RELEASES_URL: z.url().optional(),
    ALIPAY_GATEWAY_URL: z.url().default('https://openapi.alipay.com/gateway.do'),
    WECHATPAY_API_URL: z.url().default('https://api.mch.weixin.qq.com'),
    ORDER_TIMEOUT: z.coerce.number().int().min(60).max(86_400).default(1800),
    TURNSTILE_VERIFY_URL: z.url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
    CRITICAL_RATE_LIMIT: z.coerce.number().int().min(0).default(20),
    CRITICAL_RATE_LIMIT_DURATION: z.coerce.number().int().min(1).default(1200),
    /** Consecutive failed logins of one account before each attempt waits 1 s, 2 s, 4 s, ...; 0 = off. */
    LOGIN_BACKOFF_FAILURES: z.coerce.number().int().min(0).max(1000).default(5),
    /** Longest of those waits, in seconds. */
    LOGIN_BACKOFF_MAX: z.coerce.number().int().min(1).max(86_400).default(300),
    /** Days a usage_ledger row (Billing's idempotency record) is kept; 0 keeps them all. */
    USAGE_LEDGER_RETENTION_DAYS: z.coerce.number().min(0).default(30),
    ...secretsEnv,
    MIGRATE_ON_START: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
  })
  .superRefine((cfg, ctx) => {
    const problem = tlsFilesProblem(cfg);
    if (problem) ctx.addIssue({ code: 'custom', path: ['GRPC_TLS_CA'], message: problem });
  });

export type ConsoleConfig = z.infer<typeof ConsoleEnv>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; throws one ConfigError naming every bad variable. */
export function loadConsoleConfig(env: Record<string, string | undefined> = process.env): ConsoleConfig {
  const result = ConsoleEnv.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid console configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
