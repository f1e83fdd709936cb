/**
 * Telegram Login Widget (https://core.telegram.org/widgets/login#checking-authorization):
 * secret_key = SHA256(bot_token); hash = hex HMAC-SHA256(data_check_string, secret_key), where
 * data_check_string is the received fields except `hash`, sorted, as `key=value` lines joined by "\n".
 * auth_date older than TELEGRAM_AUTH_MAX_AGE_SECONDS (default 24 hours) or in the future is refused.
 */
import type { TFunction } from 'i18next';
import { InputError } from '#app/domain/errors.ts';
import {
  type BindOutcome,
  bindIdentity,
  type LoginOutcome,
  loginOrSignUp,
  providerName,
} from '#app/domain/oauth/accounts.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const TELEGRAM_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'username',
  'photo_url',
  'auth_date',
] as const;
/** Tolerated clock skew for an auth_date slightly in the future. */
const FUTURE_SKEW_SECONDS = 60;

export function telegramMaxAgeSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.TELEGRAM_AUTH_MAX_AGE_SECONDS);
  return Number.isFinite(n) && n > 0 ? n : 86_400;
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export type TelegramCheck = 'ok' | 'invalid' | 'expired';

/** Checks the widget fields in `params` against the bot token (crypto.subtle only). */
export async function checkTelegramAuth(
  params: URLSearchParams,
  botToken: string,
  now = Date.now(),
  maxAgeSeconds = telegramMaxAgeSeconds(),
): Promise<TelegramCheck> {
  const hash = (params.get('hash') ?? '').toLowerCase();
  const id = params.get('id') ?? '';
  const authDate = Number(params.get('auth_date'));
  if (!botToken || !/^[0-9a-f]{64}$/.test(hash) || !/^\d{1,20}$/.test(id) || !Number.isInteger(authDate)) {
    return 'invalid';
  }
  const lines = TELEGRAM_FIELDS.filter((k) => params.has(k))
    .map((k) => `${k}=${params.get(k)}`)
    .sort();
  const enc = new TextEncoder();
  const secret = await crypto.subtle.digest('SHA-256', enc.encode(botToken));
  const key = await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const expected = hex(await crypto.subtle.sign('HMAC', key, enc.encode(lines.join('\n'))));
  if (!timingSafeEqualHex(expected, hash)) return 'invalid';
  const age = Math.floor(now / 1000) - authDate;
  if (age > maxAgeSeconds || age < -FUTURE_SKEW_SECONDS) return 'expired';
  return 'ok';
}

async function verified(services: ConsoleServices, request: Request): Promise<{ t: TFunction; id: string }> {
  const t = await oauthT(request);
  await enforceCriticalLimit(request, services, 'oauth');
  if (!services.options.get('TelegramOAuthEnabled')) {
    throw new InputError(t('errors.disabled', { provider: providerName(t, 'telegram') }));
  }
  const params = new URL(request.url).searchParams;
  const result = await checkTelegramAuth(params, String(services.options.get('TelegramBotToken') ?? ''));
  if (result === 'invalid') throw new InputError(t('errors.telegramInvalid'));
  if (result === 'expired') throw new InputError(t('errors.telegramExpired'));
  return { t, id: params.get('id') ?? '' };
}

function displayName(params: URLSearchParams): string {
  const full = [params.get('first_name'), params.get('last_name')].filter(Boolean).join(' ');
  return full || params.get('username') || '';
}

/** GET /api/oauth/telegram/login with the widget fields: log in the owner of the Telegram id or sign up. */
export async function telegramLogin(services: ConsoleServices, request: Request): Promise<LoginOutcome> {
  const { t, id } = await verified(services, request);
  const params = new URL(request.url).searchParams;
  return loginOrSignUp(
    services,
    request,
    t,
    { provider: 'telegram', id, displayName: displayName(params) },
    '',
  );
}

/** GET /api/oauth/telegram/bind with the widget fields: bind the Telegram id to `actorId`. */
export async function telegramBind(
  services: ConsoleServices,
  request: Request,
  actorId: number,
): Promise<BindOutcome & { t: TFunction }> {
  const { t, id } = await verified(services, request);
  return { ...(await bindIdentity(services, request, t, actorId, { provider: 'telegram', id })), t };
}
