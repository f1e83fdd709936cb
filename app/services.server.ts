import type { MikroORM } from '@mikro-orm/postgresql';
import type { AppLoadContext } from '@remix-run/server-runtime';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SecretBox } from '@switchyard/db/security/secrets.ts';
import type { TrustProxy } from '@switchyard/relay/http/client-ip.ts';
import type { MailTransport } from '#app/domain/mail/mailer.server.ts';
import type { PaymentEnv } from '#app/domain/payments/config.server.ts';
import type {
  CriticalLimitConfig,
  LoginBackoffConfig,
  RateLimiter,
} from '#app/domain/security/rate-limit.server.ts';
import type { RelayClient } from '#app/grpc/relay-client.server.ts';

/**
 * What the console server (server/console.ts) hands to every loader and action as `context.services`.
 * Built once per process; request code forks the EntityManager (`orm.em.fork()`), never uses `orm.em`.
 */
export type ConsoleServices = {
  orm: MikroORM;
  options: OptionService;
  /** SECRETS_KEY's box: seals channel keys (and, through `options`, secret options); plaintext without it. */
  secrets: SecretBox;
  relay: RelayClient | null;
  version: string;
  /** unix seconds */
  startedAt: number;
  /** RELEASES_URL: GitHub-style "latest release" JSON for the settings page's update check. */
  releasesUrl?: string;
  /**
   * Limiter of the critical endpoints and of the login back-off per account (Redis-backed when REDIS_URL is set). Optional so that services built
   * in tests need not carry one: a process-wide in-memory limiter is used then.
   */
  limiter?: RateLimiter;
  /** Auth settings from the environment (server/config.ts); defaults when absent. */
  auth?: AuthEnv;
  /** Payment gateway addresses and the order timeout (ALIPAY_GATEWAY_URL, WECHATPAY_API_URL, ORDER_TIMEOUT). */
  payments?: PaymentEnv;
  /** Replaces the SMTP transport built from the SMTP* options (tests only). */
  mailTransport?: MailTransport;
};

export type AuthEnv = {
  /** TRUST_PROXY: which peers are proxies whose X-Forwarded-For hops are believed (ADR 015). */
  trustProxy: TrustProxy;
  /** TURNSTILE_VERIFY_URL: Cloudflare's siteverify endpoint unless overridden (tests use a local fake). */
  turnstileVerifyUrl: string;
  /** CRITICAL_RATE_LIMIT / CRITICAL_RATE_LIMIT_DURATION */
  criticalLimit: CriticalLimitConfig;
  /** LOGIN_BACKOFF_FAILURES / LOGIN_BACKOFF_MAX (DEFAULT_LOGIN_BACKOFF when absent) */
  loginBackoff?: LoginBackoffConfig;
  /** SESSION_SECRET: the key device cookies are signed with is derived from it (ADR 037). */
  sessionSecret?: string;
};

declare module '@remix-run/server-runtime' {
  interface AppLoadContext {
    services: ConsoleServices;
  }
}

export function getServices(context: AppLoadContext): ConsoleServices {
  const services = context?.services;
  if (!services) {
    throw new Error('AppLoadContext.services is missing: the console must be served by server/console.ts');
  }
  return services;
}
