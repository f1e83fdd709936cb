/**
 * WeChat login and bind through the configured WeChat server (new-api's wechat-server): the user scans the
 * QR code, the official account replies with a code, and `${WeChatServerAddress}/api/wechat/user?code=` with
 * `Authorization: <WeChatServerToken>` answers `{ success, message, data: openid }`.
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

async function openIdFromCode(services: ConsoleServices, t: TFunction, code: string): Promise<string> {
  const name = providerName(t, 'wechat');
  const address = String(services.options.get('WeChatServerAddress') ?? '').replace(/\/+$/, '');
  const token = String(services.options.get('WeChatServerToken') ?? '');
  if (!address) throw new InputError(t('errors.notConfigured', { provider: name }));
  let body: { success?: unknown; message?: unknown; data?: unknown };
  try {
    const res = await fetch(`${address}/api/wechat/user?code=${encodeURIComponent(code)}`, {
      headers: { Authorization: token, Accept: 'application/json' },
      signal: AbortSignal.timeout(5_000),
    });
    body = (await res.json()) as typeof body;
  } catch {
    throw new InputError(t('errors.exchangeFailed', { provider: name }));
  }
  if (body.success !== true) {
    throw new InputError(t('errors.wechatFailed', { message: String(body.message ?? '') }));
  }
  const openid = body.data;
  if (typeof openid !== 'string' || openid === '' || openid.length > 64) {
    throw new InputError(t('errors.profileInvalid', { provider: name }));
  }
  return openid;
}

async function guard(services: ConsoleServices, request: Request, code: string | null) {
  const t = await oauthT(request);
  await enforceCriticalLimit(request, services, 'oauth');
  if (!services.options.get('WeChatAuthEnabled')) {
    throw new InputError(t('errors.disabled', { provider: providerName(t, 'wechat') }));
  }
  if (!code?.trim()) throw new InputError(t('errors.codeEmpty'));
  return { t, code: code.trim() };
}

/** GET /api/oauth/wechat?code: log in the owner of the openid or sign up. */
export async function wechatLogin(
  services: ConsoleServices,
  request: Request,
  code: string | null,
): Promise<LoginOutcome> {
  const g = await guard(services, request, code);
  const id = await openIdFromCode(services, g.t, g.code);
  return loginOrSignUp(services, request, g.t, { provider: 'wechat', id }, '');
}

/** GET /api/oauth/wechat/bind?code: bind the openid to the signed-in user `actorId`. */
export async function wechatBind(
  services: ConsoleServices,
  request: Request,
  actorId: number,
  code: string | null,
): Promise<BindOutcome & { t: TFunction }> {
  const g = await guard(services, request, code);
  const id = await openIdFromCode(services, g.t, g.code);
  return { ...(await bindIdentity(services, request, g.t, actorId, { provider: 'wechat', id })), t: g.t };
}
