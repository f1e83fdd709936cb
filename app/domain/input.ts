/**
 * The console's one input layer below the zod schemas (ADR 017): what every value from a client must satisfy
 * before a schema or the database sees it, whatever the transport (JSON body, form data, query string, gRPC).
 *
 * - Text: PostgreSQL's `text`/`varchar` cannot hold U+0000 (the driver's message is refused as a protocol
 *   violation, which surfaced as a 500). A string (or an object key) containing it is refused as input. Lone
 *   UTF-16 surrogates are not refused: the driver encodes them as U+FFFD, which PostgreSQL stores.
 * - Single-line fields (SINGLE_LINE_FIELDS: a value that becomes part of an HTTP header, like a form's
 *   `redirectTo`, or that dispatches, like `intent`): one line of printable ASCII. A line break there made
 *   `Headers` throw (a 500) instead of a refusal. Multi-line text elsewhere (notices, mappings) keeps CR/LF.
 * - Integers: bounded to the column they land in (`int4`, `smallint`, `int8` as a JS safe integer), so an
 *   out-of-range or fractional number is a validation error, never a database error.
 * - `null` for an optional field means absent (issue 23 item 9): JSON clients send `"aff_code": null` for
 *   "no value". A field that may be left out but does not itself accept null gets its key dropped before the
 *   schema runs; a required field's null is still refused, and a field that accepts null keeps it.
 */
import { z } from 'zod';

export const INT2 = { min: -32_768, max: 32_767 } as const;
export const INT4 = { min: -2_147_483_648, max: 2_147_483_647 } as const;
/** `bigint` columns read as JS numbers: the safe-integer range. */
export const INT8 = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } as const;

const MAX_DEPTH = 64;

/**
 * The dotted path of the first string (or key) under `value` that contains U+0000, or null when none does.
 * Depth beyond MAX_DEPTH is not walked (JSON nesting depth is bounded at the transport).
 */
export function findNulText(value: unknown, path: (string | number)[] = [], depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || '_' : null;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNulText(value[i], [...path, i], depth + 1);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (value instanceof FormData || value instanceof URLSearchParams) {
    for (const [k, v] of value.entries()) {
      if (k.includes('\u0000')) return [...path, '_'].join('.');
      const hit = findNulText(v, [...path, k], depth + 1);
      if (hit !== null) return hit;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return [...path, '_'].join('.') || '_';
    const hit = findNulText(v, [...path, k], depth + 1);
    if (hit !== null) return hit;
  }
  return null;
}

/** Fields whose value must be one line of printable ASCII (see the module comment), wherever they appear. */
export const SINGLE_LINE_FIELDS: ReadonlySet<string> = new Set(['redirectTo', 'intent']);

const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** The field holding text the input layer refuses, and why: U+0000 anywhere, or a break in a single-line field. */
export type UnsafeText = { field: string; problem: 'nul' | 'singleLine' };

/**
 * The first string under `value` (an object, FormData or URLSearchParams) that the input layer refuses: one
 * holding U+0000 (findNulText), else a SINGLE_LINE_FIELDS value that is not one line of printable ASCII.
 */
export function findUnsafeText(value: unknown): UnsafeText | null {
  const nul = findNulText(value);
  if (nul !== null) return { field: nul, problem: 'nul' };
  const entries =
    value instanceof FormData || value instanceof URLSearchParams
      ? [...value.entries()]
      : value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value)
        : [];
  for (const [k, v] of entries)
    if (SINGLE_LINE_FIELDS.has(k) && typeof v === 'string' && NOT_PRINTABLE_ASCII.test(v))
      return { field: k, problem: 'singleLine' };
  return null;
}

/**
 * An integer from a JSON number or a decimal string (forms and query strings carry text), within
 * `range` (default `int4`). Fractions, exponents, NaN, and values outside the range fail with `message`.
 */
export function intInput(range: { min: number; max: number } = INT4, message?: string) {
  return z
    .union(
      [
        z.number(),
        z
          .string()
          .trim()
          .regex(/^[-+]?\d{1,20}$/, message),
      ],
      message ? { message } : undefined,
    )
    .transform(Number)
    .pipe(z.number().int(message).min(range.min, message).max(range.max, message));
}

/** zod 4's definition of a schema (the parts this walk reads). */
type SchemaDef = {
  type?: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
};

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod?: { def?: SchemaDef } })._zod?.def ?? {};
}

/**
 * Whether an object field may be left out: zod marks optional and defaulted fields (`optin`), and a field whose
 * own parse accepts undefined (a transform that supplies a value) may be left out too.
 */
export function mayBeAbsent(field: z.ZodType): boolean {
  if ((field as unknown as { _zod?: { optin?: string } })._zod?.optin) return true;
  return field.safeParse(undefined).success;
}

/**
 * `value` with every `null` removed from the keys of objects whose schema field may be absent and does not
 * accept null itself, walking nested objects and arrays the schema describes (through optional, nullable,
 * default, catch, readonly and the input side of pipes and transforms). Other values are returned as given;
 * nothing is changed in place.
 */
export function nullAsAbsent(schema: z.ZodType, value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return def.innerType ? nullAsAbsent(def.innerType, value, depth) : value;
    case 'pipe':
      return def.in ? nullAsAbsent(def.in, value, depth) : value;
    case 'array': {
      const element = def.element;
      if (!Array.isArray(value) || !element) return value;
      let out: unknown[] | null = null;
      value.forEach((item, i) => {
        const next = nullAsAbsent(element, item, depth + 1);
        if (next !== item) {
          out ??= [...value];
          out[i] = next;
        }
      });
      return out ?? value;
    }
    case 'object': {
      const proto = Object.getPrototypeOf(value);
      if (!def.shape || (proto !== Object.prototype && proto !== null)) return value;
      const record = value as Record<string, unknown>;
      let out: Record<string, unknown> | null = null;
      for (const [key, field] of Object.entries(def.shape)) {
        if (!Object.hasOwn(record, key)) continue;
        const item = record[key];
        if (item === null) {
          if (mayBeAbsent(field) && !field.safeParse(null).success) {
            out ??= { ...record };
            delete out[key];
          }
          continue;
        }
        const next = nullAsAbsent(field, item, depth + 1);
        if (next !== item) {
          out ??= { ...record };
          out[key] = next;
        }
      }
      return out ?? value;
    }
    default:
      return value;
  }
}
