import type { TFunction } from 'i18next';
import type { z } from 'zod';
import { InputError } from '#app/domain/errors.ts';
import { findUnsafeText, nullAsAbsent } from '#app/domain/input.ts';

export type ParseOptions = {
  /** i18n namespace of the calling area (`users`, `tokens`, ...). */
  ns: string;
  /**
   * `raw`: field errors keep the schema's messages and the error says `<ns>:errors.invalidInput`.
   * `translated`: each schema message is an i18n key of `ns` (falling back to `fallbackKey`), and the first
   * translated message is the error's message.
   */
  messages: 'raw' | 'translated';
  /** Key (in `ns`) of the generic message; default `errors.invalidInput`. */
  fallbackKey?: string;
  /** Field key for issues that have no path; default `_`. */
  rootKey?: string;
};

/**
 * Parses input with a zod schema, the one way domain functions validate: any failure becomes an InputError
 * with per-field messages (`fieldErrors`), which every transport maps (forms re-render, JSON answers
 * success false with `data.fieldErrors`). Before the schema, the shared input layer (app/domain/input.ts)
 * refuses text PostgreSQL cannot store (U+0000), whatever field it is in, and reads `null` in an optional
 * field as the field left out (nullAsAbsent).
 */
export function parseInput<S extends z.ZodType>(
  t: TFunction,
  schema: S,
  value: unknown,
  opts: ParseOptions,
): z.output<S> {
  refuseUnstorableText(t, value);
  const result = schema.safeParse(nullAsAbsent(schema, value));
  if (result.success) return result.data;
  const fallbackKey = `${opts.ns}:${opts.fallbackKey ?? 'errors.invalidInput'}`;
  const fieldErrors: Record<string, string[]> = {};
  let first = '';
  for (const issue of result.error.issues) {
    const message =
      opts.messages === 'translated'
        ? t(`${opts.ns}:${issue.message}`, { defaultValue: t(fallbackKey) })
        : issue.message;
    first ||= message;
    const key = issue.path.join('.') || (opts.rootKey ?? '_');
    fieldErrors[key] = [...(fieldErrors[key] ?? []), message];
  }
  throw new InputError(opts.messages === 'translated' ? first : t(fallbackKey), fieldErrors);
}

/**
 * Throws an InputError naming the field when any string (or key) under `value` contains U+0000, or a
 * single-line field (`redirectTo`, `intent`) is not one line of printable ASCII (app/domain/input.ts).
 */
export function refuseUnstorableText(t: TFunction, value: unknown): void {
  const unsafe = findUnsafeText(value);
  if (unsafe === null) return;
  const message = t(unsafe.problem === 'nul' ? 'common:errors.nulText' : 'common:errors.singleLine');
  throw new InputError(message, { [unsafe.field]: [message] });
}
