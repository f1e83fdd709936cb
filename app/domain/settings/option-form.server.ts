/**
 * The shared mechanics of the admin settings tabs (seed 000 §2 "Settings page", §4, §5): a tab is made of option
 * forms, each a list of option keys with its own save button. The form posts every key (a plain POST to
 * /setting?tab=X, with or without JavaScript: ADR 023); the server keeps only the keys whose value differs from the
 * stored one, checks them all with the registry first (a refusal saves nothing), then saves each through
 * `updateOption` (validation, audit with who changed it, announcement to every process), one key at a time.
 *
 * - nothing changed: 'you seem to have changed nothing' (seed 000 §5);
 * - a key fails after others were saved: 'partial save failed, please retry' with that key's error (seed 000 §8);
 * - success: the form's own confirmation ('announcement updated', ...) or the generic 'saved'.
 *
 * Secret options are write-only (seed 000 §5, ADR 004): the form shows an empty input and whether a value is set,
 * and an empty submitted secret means "unchanged" (it is not sent to `updateOption`).
 */
import { data } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import {
  normalizeOptionInput,
  OPTIONS,
  type OptionKey,
  OptionValidationError,
} from '@switchyard/db/options/registry.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { InputError, isDomainError, UnauthorizedError } from '#app/domain/errors.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import {
  canWriteOption,
  inputText,
  type OptionsCtx,
  optionErrorMessage,
  refuseRootOnlyOptions,
  requireOptionsAdmin,
  updateOption,
} from '#app/domain/settings/options.server.ts';
import { refuseUnstorableText } from '#app/domain/validation.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/** One save button of a tab: the keys it posts and the confirmation it shows (an i18n key of `settings`). */
export type OptionFormSpec = {
  /** The tab whose page the form lives on (`/setting?tab=<tab>`). */
  readonly tab: string;
  /** Unique over all tabs; the form posts `intent=option:<id>`. */
  readonly id: string;
  readonly keys: readonly OptionKey[];
  /** i18n key of the success message; the generic 'saved' when absent. */
  readonly saved?: string;
  /**
   * JSON number-list keys edited as one number input per amount (ProductConfig, TopupConfig): the posted values
   * (empty inputs left out) make the JSON array that is stored.
   */
  readonly numberLists?: readonly OptionKey[];
  /**
   * A change that must be confirmed first (seed 000 §6: disabling password login): when `key` is posted as
   * `value` while another value is stored and the post lacks `confirm=yes`, nothing is saved and the reply
   * carries `confirm` (the i18n key `message`); the page asks (a dialog with JavaScript, a confirmation step
   * without) and posts the same form again with `confirm=yes`.
   */
  readonly confirm?: { readonly key: OptionKey; readonly value: string; readonly message: string };
  /** A key's own refusal message (an i18n key of `settings`) instead of the registry's, e.g. a range. */
  readonly messages?: Readonly<Partial<Record<OptionKey, string>>>;
};

export const OPTION_INTENT_PREFIX = 'option:';
export const optionIntent = (spec: Pick<OptionFormSpec, 'id'>) => `${OPTION_INTENT_PREFIX}${spec.id}`;

/**
 * What a tab's forms show: every key's stored value as text, for a secret only whether it is set, and the keys
 * the viewer may not change (root-only keys for an administrator, ADR 033: shown read-only, never posted).
 */
export type OptionFormValues = {
  values: Record<string, string>;
  secretsSet: Record<string, boolean>;
  readOnly: Record<string, boolean>;
  /** Forms (by id) whose every key is read-only for the viewer: shown without a usable save button. */
  readOnlyForms: Record<string, boolean>;
};

export function loadOptionValues(
  options: Pick<OptionService, 'getRaw'>,
  keys: readonly OptionKey[],
  viewer: Pick<SessionUser, 'role'>,
): OptionFormValues {
  const values: Record<string, string> = {};
  const secretsSet: Record<string, boolean> = {};
  const readOnly: Record<string, boolean> = {};
  for (const key of keys) {
    const raw = options.getRaw(key);
    if (OPTIONS[key].secret) {
      values[key] = '';
      secretsSet[key] = raw !== '';
    } else values[key] = raw;
    if (!canWriteOption(viewer, key)) readOnly[key] = true;
  }
  return { values, secretsSet, readOnly, readOnlyForms: {} };
}

/** A tab's forms as `loadOptionValues` shows them, plus which forms the viewer cannot save at all. */
export function loadOptionForms(
  options: Pick<OptionService, 'getRaw'>,
  specs: readonly OptionFormSpec[],
  viewer: Pick<SessionUser, 'role'>,
): OptionFormValues {
  const data = loadOptionValues(
    options,
    specs.flatMap((f) => f.keys),
    viewer,
  );
  for (const spec of specs)
    if (spec.keys.every((key) => data.readOnly[key])) data.readOnlyForms[spec.id] = true;
  return data;
}

/**
 * The posted value of each key of the form: the last one (a checkbox posts a hidden 'false' first and 'true' when
 * checked), line ends as the browser's CRLF made LF. A key absent from the post is left as it is.
 */
export function readOptionForm(spec: OptionFormSpec, form: FormData): Partial<Record<OptionKey, string>> {
  const out: Partial<Record<OptionKey, string>> = {};
  for (const key of spec.keys) {
    if (spec.numberLists?.includes(key) && form.has(key)) {
      const amounts = form
        .getAll(key)
        .filter((v): v is string => typeof v === 'string' && v.trim() !== '')
        .map((v) => (/^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v.trim()));
      out[key] = JSON.stringify(amounts);
      continue;
    }
    const last = form.getAll(key).at(-1);
    if (typeof last === 'string') out[key] = last.replace(/\r\n?/g, '\n');
  }
  return out;
}

/** The keys whose posted value differs from the stored one, with the text to store; refusals as field errors. */
function changedKeys(
  ctx: OptionsCtx,
  spec: OptionFormSpec,
  input: Partial<Record<OptionKey, string>>,
): { changed: [OptionKey, string][]; fieldErrors: Record<string, string[]> } {
  const changed: [OptionKey, string][] = [];
  const fieldErrors: Record<string, string[]> = {};
  for (const key of spec.keys) {
    const posted = input[key];
    if (posted === undefined) continue;
    const def = OPTIONS[key];
    // A write-only secret left empty means "unchanged" (seed 000 §5).
    if (def.secret && posted === '') continue;
    refuseUnstorableText(ctx.t, { [key]: posted });
    // Text is kept as typed (Markdown and HTML may mean their spaces); numbers are trimmed by the registry.
    const text = inputText(ctx, key, posted);
    try {
      const { raw, value } = normalizeOptionInput(key, text);
      const same =
        raw === ctx.options.getRaw(key) ||
        (def.type !== 'string' && JSON.stringify(value) === JSON.stringify(ctx.options.get(key)));
      if (!same) changed.push([key, text]);
    } catch (error) {
      if (!(error instanceof OptionValidationError)) throw error;
      const own = spec.messages?.[key];
      fieldErrors[key] = [own ? ctx.t(`settings:${own}`, { key }) : optionErrorMessage(ctx, key, error)];
    }
  }
  return { changed, fieldErrors };
}

/**
 * Saves the changed keys of one form. Every key is checked before the first is written, so a bad value, or a
 * root-only key changed by an administrator (ADR 033), saves nothing; a failure after some keys were saved says
 * so. Returns the keys saved.
 */
export async function saveOptionForm(
  ctx: OptionsCtx,
  spec: OptionFormSpec,
  input: Partial<Record<OptionKey, string>>,
): Promise<OptionKey[]> {
  requireOptionsAdmin(ctx);
  const { changed, fieldErrors } = changedKeys(ctx, spec, input);
  // A root-only key the post would change (a valid value or not) refuses the whole form before any write.
  refuseRootOnlyOptions(ctx, [...changed.map(([key]) => key), ...(Object.keys(fieldErrors) as OptionKey[])]);
  const first = Object.values(fieldErrors)[0]?.[0];
  if (first) throw new InputError(first, fieldErrors);
  if (changed.length === 0) throw new InputError(ctx.t('settings:optionForm.nothingChanged'));
  const saved: OptionKey[] = [];
  for (const [key, text] of changed) {
    try {
      await updateOption(ctx, key, text);
      saved.push(key);
    } catch (error) {
      if (saved.length === 0) throw error;
      const detail = error instanceof InputError ? error.message : ctx.t('settings:optionForm.saveFailed');
      throw new InputError(ctx.t('settings:optionForm.partialFailed'), { [key]: [detail] });
    }
  }
  return saved;
}

export type OptionFormReply = {
  intent: string;
  error?: string;
  fieldErrors?: Record<string, string[]>;
  /** What the admin typed (secrets left out), shown again after a refusal: the page re-renders without JavaScript. */
  values?: Record<string, string>;
  /** The change needs confirming first: the warning to show (spec `confirm`). */
  confirm?: string;
};

/**
 * POST /setting?tab=X intent=option:<id>: saves the form's changed keys, then redirects back to the tab with the
 * confirmation as a toast (PRG); a refusal re-renders the tab with the message (400; 403 for a non-admin).
 */
export async function optionFormAction(
  request: Request,
  services: ConsoleServices,
  user: SessionUser,
  spec: OptionFormSpec,
  form: FormData,
) {
  const t = await getFixedT(request);
  const ctx: OptionsCtx = {
    options: services.options,
    actor: user,
    t,
    ip: clientIp(request, services).slice(0, 64),
  };
  const input = readOptionForm(spec, form);
  const values = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [key, v] of Object.entries(input)) if (!OPTIONS[key as OptionKey].secret) out[key] = v;
    return out;
  };
  const c = spec.confirm;
  if (
    c &&
    user.role >= Role.Admin &&
    input[c.key] === c.value &&
    services.options.getRaw(c.key) !== c.value &&
    form.get('confirm') !== 'yes'
  ) {
    return data<OptionFormReply>(
      { intent: optionIntent(spec), confirm: t(`settings:${c.message}`), values: values() },
      { status: 409 },
    );
  }
  try {
    await saveOptionForm(ctx, spec, input);
    return redirectWithToast(`/setting?tab=${spec.tab}`, {
      type: 'success',
      message: t(`settings:${spec.saved ?? 'optionForm.saved'}`),
    });
  } catch (error) {
    if (isDomainError(error) && !(error instanceof UnauthorizedError)) {
      const fieldErrors = error instanceof InputError ? error.fieldErrors : {};
      return data<OptionFormReply>(
        { intent: optionIntent(spec), error: error.message, fieldErrors, values: values() },
        { status: error.status === 403 ? 403 : 400 },
      );
    }
    throw error;
  }
}
