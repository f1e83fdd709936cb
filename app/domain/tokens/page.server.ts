import { type AccountCtx, listUserModels, quotaDisplay } from '#app/domain/account/account.server.ts';
import type { QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { formatTimestamp, parseDateTimeLocal, toDateTimeLocal } from '#app/utils/time.ts';
import { EXPIRY_PRESETS, type ExpiryPreset } from './constants.ts';
import type { TokenFormValues } from './token-ui.tsx';
import { type TokensCtx, type TokenWire, usableGroups } from './tokens.server.ts';

/** Server helpers of the /token pages: form -> domain input, editor data, times. */

/** 'YYYY-MM-DD HH:mm:ss' of unix seconds in the user's zone. */
export function formatTime(seconds: number, timeZone: string): string {
  return formatTimestamp(seconds, timeZone);
}

/** The datetime-local text of an expiry ('' = never) in the user's zone. */
export function expiryText(expiredTime: number, timeZone: string): string {
  if (expiredTime === -1) return '';
  return toDateTimeLocal(expiredTime, timeZone);
}

export function toFormValues(token: TokenWire, timeZone: string): TokenFormValues {
  return {
    name: token.name,
    remain_quota: String(token.remain_quota),
    unlimited_quota: token.unlimited_quota,
    expiry_text: expiryText(token.expired_time, timeZone),
    expired_time: token.expired_time,
    model_limits_enabled: token.model_limits_enabled,
    model_limits: token.model_limits,
    allow_ips: token.allow_ips,
    group: token.group,
  };
}

/** The submitted form as editor values (to show them again after a refusal). */
export function submittedValues(form: Record<string, FormDataEntryValue>): TokenFormValues {
  const s = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
  return {
    name: s('name'),
    remain_quota: s('remain_quota'),
    unlimited_quota: s('unlimited_quota') === 'true',
    expiry_text: s('expired_time'),
    expired_time: 0,
    model_limits_enabled: s('model_limits_enabled') === 'true',
    model_limits: s('model_limits'),
    allow_ips: s('allow_ips'),
    group: s('group'),
  };
}

/**
 * A posted editor form as the JSON payload of POST/PUT /api/token/: unchecked boxes are false, a chosen
 * expiry preset (never / hour / day / month) wins over the datetime field, a quick amount over the quota field.
 */
export function formToTokenInput(
  form: Record<string, FormDataEntryValue>,
  timeZone: string,
): Record<string, unknown> {
  const s = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
  const preset = s('expiry_preset') as ExpiryPreset | '';
  let expired: string | number = s('expired_time').trim();
  if (preset && preset in EXPIRY_PRESETS) {
    const seconds = EXPIRY_PRESETS[preset];
    expired = seconds < 0 ? -1 : Math.floor(Date.now() / 1000) + seconds;
  } else if (expired === '') expired = -1;
  else if (/^-?\d{1,4}$/.test(s('tz_offset')) && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(expired)) {
    // A datetime-local value in the browser's zone (JavaScript posts its offset in minutes, as getTimezoneOffset).
    const ms = Date.parse(`${expired}Z`);
    if (Number.isFinite(ms)) expired = Math.floor(ms / 1000) + Number(s('tz_offset')) * 60;
  } else {
    // A datetime-local value in the user's zone (the tz cookie), as the form showed it.
    const seconds = parseDateTimeLocal(expired, timeZone);
    if (seconds !== null) expired = seconds;
  }
  return {
    name: s('name'),
    remain_quota: s('quota_preset') || s('remain_quota'),
    unlimited_quota: s('unlimited_quota') === 'true',
    expired_time: expired,
    model_limits_enabled: s('model_limits_enabled') === 'true',
    model_limits: s('model_limits'),
    allow_ips: s('allow_ips'),
    group: s('group'),
    ...(form.count !== undefined ? { count: s('count') || '1' } : {}),
  };
}

export type EditorData = { models: string[]; groups: Record<string, string>; display: QuotaDisplay };

/** What the editor needs: the user's models (GET /api/user/models), usable groups, the quota display. */
export async function editorData(ctx: TokensCtx): Promise<EditorData> {
  const accountCtx = ctx as unknown as AccountCtx;
  return {
    models: await listUserModels(accountCtx).catch(() => []),
    groups: usableGroups(ctx),
    display: quotaDisplay(accountCtx.options),
  };
}
