/**
 * Settings "models" tab (seed 000 §2: Gemini settings and Claude settings): the six claude.* / gemini.* options
 * that the relay hands to its adaptors. Saved through OptionService.set (registry validation, one AuditEntry per
 * key, announced to the relays), only the keys that changed (seed 000 §4), after every key was checked so a
 * refusal writes nothing. The page's admin guard and ctx are the modelTab's (pricing/model-tab.server.ts).
 */

import { data } from '@remix-run/node';
import {
  GEMINI_API_VERSIONS,
  GEMINI_SAFETY_THRESHOLDS,
  normalizeOptionInput,
  type OptionKey,
  OptionValidationError,
} from '@switchyard/db/options/registry.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { InputError, isDomainError, UnauthorizedError } from '#app/domain/errors.ts';
import { type ModelTabCtx, requireOptionAdmin } from '#app/domain/pricing/model-tab.server.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const MODELS_TAB = '/setting?tab=models';
export const MODELS_INTENT = 'modelsSettings';

export const MODELS_JSON_KEYS = [
  'gemini.safety_settings',
  'gemini.version_settings',
  'claude.model_headers_settings',
  'claude.default_max_tokens',
] as const satisfies readonly OptionKey[];
export const MODELS_KEYS = [
  ...MODELS_JSON_KEYS,
  'claude.thinking_adapter_enabled',
  'claude.thinking_adapter_budget_tokens_percentage',
] as const satisfies readonly OptionKey[];
export type ModelsKey = (typeof MODELS_KEYS)[number];
const isJsonKey = (key: ModelsKey) => (MODELS_JSON_KEYS as readonly string[]).includes(key);

/** The tab's form values as text: JSON pretty-printed, the boolean as 'true' / 'false'. */
export type ModelsSettingsData = {
  values: Record<ModelsKey, string>;
  thresholds: readonly string[];
  versions: readonly string[];
};

export function loadModelsSettings(options: Pick<OptionService, 'get'>): ModelsSettingsData {
  const values = {} as Record<ModelsKey, string>;
  for (const key of MODELS_KEYS) {
    const v = options.get(key);
    values[key] = isJsonKey(key) ? JSON.stringify(v, null, 2) : String(v);
  }
  return { values, thresholds: GEMINI_SAFETY_THRESHOLDS, versions: GEMINI_API_VERSIONS };
}

/** The posted keys (a key absent from the form is left as it is; the checkbox posts a hidden 'false' first). */
export function readModelsForm(form: FormData): Partial<Record<ModelsKey, string>> {
  const out: Partial<Record<ModelsKey, string>> = {};
  for (const key of MODELS_KEYS) {
    const last = form.getAll(key).at(-1);
    if (typeof last === 'string') out[key] = last;
  }
  return out;
}

/** A registry refusal in the admin's language: the seed's JSON message, the budget range, or the detail. */
function message(ctx: Pick<ModelTabCtx, 't'>, key: ModelsKey, error: OptionValidationError): string {
  const detail = error.message.slice(key.length + 2);
  if (detail === 'not a valid JSON string') return ctx.t('settings:modelsTab.errors.invalidJson', { key });
  if (key === 'claude.thinking_adapter_budget_tokens_percentage')
    return ctx.t('settings:modelsTab.errors.budgetRange');
  return ctx.t('settings:modelsTab.errors.invalid', { key, detail });
}

/** Validates every posted key, then writes the changed ones. Returns the number written. */
export async function saveModelsSettings(
  ctx: ModelTabCtx,
  input: Partial<Record<ModelsKey, string>>,
): Promise<number> {
  requireOptionAdmin(ctx);
  const changed: [ModelsKey, string][] = [];
  const fieldErrors: Record<string, string[]> = {};
  for (const key of MODELS_KEYS) {
    const raw = input[key];
    if (raw === undefined) continue;
    const text = isJsonKey(key) ? raw : raw.trim();
    try {
      const { value } = normalizeOptionInput(key, text);
      if (JSON.stringify(value) !== JSON.stringify(ctx.options.get(key))) changed.push([key, text]);
    } catch (error) {
      if (!(error instanceof OptionValidationError)) throw error;
      fieldErrors[key] = [message(ctx, key, error)];
    }
  }
  const first = Object.values(fieldErrors)[0]?.[0];
  if (first) throw new InputError(first, fieldErrors);
  if (changed.length === 0) throw new InputError(ctx.t('settings:modelsTab.errors.nothingChanged'));
  for (const [key, text] of changed) await ctx.options.set(key, text, ctx.actor.id, { ip: ctx.ip });
  return changed.length;
}

export type ModelsSettingsReply = {
  intent: string;
  error?: string;
  fieldErrors?: Record<string, string[]>;
  /** What the admin typed, shown again after a refusal (the page re-renders without JavaScript). */
  values?: Partial<Record<ModelsKey, string>>;
};

/** POST /setting intent=modelsSettings: PRG with a toast; a refusal re-renders the tab (400, 403 non-admin). */
export async function modelsSettingsAction(
  request: Request,
  services: ConsoleServices,
  user: SessionUser,
  form: FormData,
) {
  const t = await getFixedT(request);
  const ctx: ModelTabCtx = {
    em: services.orm.em.fork(),
    options: services.options,
    actor: user,
    t,
    ip: clientIp(request, services).slice(0, 64),
  };
  const values = readModelsForm(form);
  try {
    const count = await saveModelsSettings(ctx, values);
    return redirectWithToast(MODELS_TAB, {
      type: 'success',
      message: t('settings:modelsTab.saved', { count }),
    });
  } catch (error) {
    if (isDomainError(error) && !(error instanceof UnauthorizedError)) {
      const fieldErrors = error instanceof InputError ? error.fieldErrors : {};
      return data<ModelsSettingsReply>(
        { intent: MODELS_INTENT, error: error.message, fieldErrors, values },
        { status: error.status === 403 ? 403 : 400 },
      );
    }
    throw error;
  }
}
