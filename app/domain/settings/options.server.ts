/**
 * The option API (seed 000 §7 "Options and pricing"): every option of the registry listed for administrators,
 * and one option changed at a time, validated by the registry, audited with who changed it (secrets redacted),
 * stored and announced to every console and relay (OptionService.set). The settings tabs save through
 * `updateOption` too: it is the one place an administrator changes an option. Options that decide where a
 * secret, a link or money goes are root's to change (registry `rootOnly`, ADR 033).
 */
import { Role } from '@switchyard/db/entities/user.ts';
import {
  isOptionKey,
  isRootOnlyOption,
  normalizeOptionInput,
  OPTION_KEYS,
  OPTIONS,
  type OptionKey,
  OptionValidationError,
} from '@switchyard/db/options/registry.ts';
import { ForbiddenError, InputError } from '#app/domain/errors.ts';
import type { DomainCtx } from '#app/domain/http.server.ts';

export type OptionsCtx = Pick<DomainCtx, 'options' | 'actor' | 't' | 'ip'>;

/**
 * One row of `GET /api/option/`: new-api's `{key, value}`. A secret option (SMTP password, OAuth secrets,
 * payment keys, ...) never carries its value: `value` is '' and `is_set` says whether one is stored, so
 * new-api's frontend (which copies `value` into its inputs and sends a secret only when non-empty) works
 * unchanged, and ours can show "set" next to the empty field.
 */
export type OptionRow = (
  | { key: OptionKey; value: string }
  | { key: OptionKey; value: ''; secret: true; is_set: boolean }
) & {
  /** Only root may change it (ADR 033); absent for the others. An extra field new-api's frontend ignores. */
  root_only?: true;
};

/** Administrators (seed 000 §2 and §6: the settings tabs other than personal are admin-only). */
export function requireOptionsAdmin(ctx: Pick<OptionsCtx, 'actor' | 't'>): void {
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('settings:options.errors.forbidden'));
}

/** GET /api/option/: every registry key, in the registry's order; a root-only key says so. */
export function listOptions(ctx: Pick<OptionsCtx, 'actor' | 't' | 'options'>): OptionRow[] {
  requireOptionsAdmin(ctx);
  return OPTION_KEYS.map((key): OptionRow => {
    const row: OptionRow = OPTIONS[key].secret
      ? { key, value: '', secret: true, is_set: ctx.options.getRaw(key) !== '' }
      : { key, value: ctx.options.getRaw(key) };
    return isRootOnlyOption(key) ? { ...row, root_only: true } : row;
  });
}

/** Whether the actor may change the option: root-only keys (ADR 033) need root, the rest an administrator. */
export function canWriteOption(actor: Pick<OptionsCtx['actor'], 'role'>, key: OptionKey): boolean {
  return actor.role >= Role.Root || (actor.role >= Role.Admin && !isRootOnlyOption(key));
}

/**
 * Refuses, before anything is written, when any of `keys` is root-only and the actor is not root (ADR 033): an
 * administrator must not decide where mail, links, keys or money go. The refusal names every such key and is an
 * InputError, so the JSON contract answers it as new-api answers an option refusal (HTTP 200, success false).
 */
export function refuseRootOnlyOptions(
  ctx: Pick<OptionsCtx, 'actor' | 't'>,
  keys: readonly OptionKey[],
  field: (key: OptionKey) => string = (key) => key,
): void {
  const refused = keys.filter((key) => !canWriteOption(ctx.actor, key));
  if (refused.length === 0) return;
  const fieldErrors: Record<string, string[]> = {};
  for (const key of refused) {
    const name = field(key);
    fieldErrors[name] = [...(fieldErrors[name] ?? []), ctx.t('settings:options.errors.rootOnly', { key })];
  }
  throw new InputError(
    refused.map((key) => ctx.t('settings:options.errors.rootOnly', { key })).join('; '),
    fieldErrors,
  );
}

/** Keys whose value loses a trailing slash before it is stored (seed 000 §5). */
const NO_TRAILING_SLASH: readonly OptionKey[] = ['ServerAddress', 'WorkerUrl'];

/**
 * The value as the registry reads it. new-api's frontend sends every value as a string (booleans as
 * 'true' / 'false'); scripts may send numbers and booleans, and a JSON option may come as the object itself.
 */
export function inputText(ctx: Pick<OptionsCtx, 't'>, key: OptionKey, value: unknown): string {
  if (typeof value === 'string')
    return NO_TRAILING_SLASH.includes(key) ? value.trim().replace(/\/+$/, '') : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (OPTIONS[key].type === 'json' && value !== null && typeof value === 'object')
    return JSON.stringify(value);
  throw new InputError(ctx.t('settings:options.errors.valueRequired', { key }), {
    value: [ctx.t('settings:options.errors.valueRequired', { key })],
  });
}

/** A registry refusal in the admin's language: the seed's JSON message, the bounds, or the registry's detail. */
export function optionErrorMessage(
  ctx: Pick<OptionsCtx, 't'>,
  key: string,
  error: OptionValidationError,
): string {
  const detail = error.message.startsWith(`${key}: `) ? error.message.slice(key.length + 2) : error.message;
  const t = (name: string, vars: Record<string, unknown> = {}) =>
    ctx.t(`settings:options.errors.${name}`, { key, ...vars });
  if (detail === 'not a valid JSON string') return t('invalidJson');
  if (detail === 'must be an integer') return t('integer');
  if (detail === 'must be a number') return t('number');
  if (detail === "must be 'true' or 'false'") return t('boolean');
  const min = /^must be at least (.+)$/.exec(detail);
  if (min) return t('min', { min: min[1] });
  const max = /^must be at most (.+)$/.exec(detail);
  if (max) return t('max', { max: max[1] });
  const oneOf = /^must be one of (.+)$/.exec(detail);
  if (oneOf) return t('oneOf', { values: oneOf[1] });
  return t('invalid', { detail });
}

/**
 * PUT /api/option/ {key, value}: validates the value with the registry's rules, then stores it, writes the
 * AuditEntry (actor, client address; secrets redacted) and announces it. An unknown key, a root-only key changed
 * by an administrator (ADR 033) or a refused value changes nothing. Returns the stored string form (a secret's is
 * not returned: '').
 */
export async function updateOption(
  ctx: OptionsCtx,
  key: unknown,
  value: unknown,
): Promise<{ key: OptionKey; value: string }> {
  requireOptionsAdmin(ctx);
  if (typeof key !== 'string' || key === '')
    throw new InputError(ctx.t('settings:options.errors.keyRequired'), {
      key: [ctx.t('settings:options.errors.keyRequired')],
    });
  if (!isOptionKey(key))
    throw new InputError(ctx.t('settings:options.errors.unknownKey', { key: key.slice(0, 100) }), {
      key: [ctx.t('settings:options.errors.unknownKey', { key: key.slice(0, 100) })],
    });
  refuseRootOnlyOptions(ctx, [key], () => 'value');
  const text = inputText(ctx, key, value);
  let raw: string;
  try {
    raw = normalizeOptionInput(key, text).raw;
    await ctx.options.set(key, raw, ctx.actor.id, { ip: ctx.ip });
  } catch (error) {
    if (!(error instanceof OptionValidationError)) throw error;
    const message = optionErrorMessage(ctx, key, error);
    throw new InputError(message, { value: [message] });
  }
  return { key, value: OPTIONS[key].secret ? '' : raw };
}
