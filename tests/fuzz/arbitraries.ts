/**
 * Hostile values for the fuzz suites: wrong types, NUL bytes and lone surrogates, huge, negative and fractional
 * numbers, long strings and unicode, nested JSON.
 */
import fc from 'fast-check';

export const nastyStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  'fuzz\u0000',
  '\ud800',
  'x\udfff',
  '\r\n',
  'a\rb',
  'fuzz\n',
  '/token\r\nSet-Cookie: sy_session=x',
  'x\u0001\u001f\u007f',
  '😀'.repeat(30),
  'é'.repeat(100),
  'x'.repeat(256),
  'y'.repeat(300),
  'z'.repeat(5000),
  '-1',
  '0',
  '1.5',
  '1e308',
  '2147483648',
  '9223372036854775808',
  '1099511627776',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  '%',
  '_',
  '\\',
  "'; drop table users; --",
  '<script>alert(1)</script>',
  '../../etc/passwd',
  'http://',
  'ht!tp://[::1',
  'http://127.0.0.1:1/\u0000',
  '://',
  'sk-',
];

export const nastyNumbers = [
  0,
  -0,
  -1,
  1.5,
  -2.5,
  0.1,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 40,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  5e-324,
];

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 200, maxLength: 400 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `${s}\r\n${s}`) },
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...nastyNumbers),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(Number),
);

/** Any JSON value, biased to hostile ones. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: nastyString },
  { weight: 4, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom({}, [], [null], { toString: 'x' }, [1, 2], ['a', 'b']) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 5 }) },
);

/**
 * A body derived from `base`: some fields replaced by hostile values, sometimes dropped, sometimes an extra key;
 * occasionally a wholly arbitrary JSON value instead of an object.
 */
export function mutatedObject(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(base);
  const mutated = fc
    .record({
      replace: fc.subarray(keys, { minLength: keys.length ? 1 : 0, maxLength: Math.min(3, keys.length) }),
      values: fc.array(nastyValue, { minLength: 3, maxLength: 3 }),
      drop: fc.subarray(keys, { maxLength: Math.min(1, keys.length) }),
      extra: fc.option(fc.tuple(fc.string({ maxLength: 10 }), nastyValue), { freq: 5 }),
    })
    .map(({ replace, values, drop, extra }) => {
      const out: Record<string, unknown> = { ...base };
      replace.forEach((k, i) => {
        out[k] = values[i];
      });
      for (const k of drop) delete out[k];
      if (extra) out[extra[0]] = extra[1];
      return out;
    });
  return fc.oneof({ weight: 9, arbitrary: mutated }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) });
}

/** Query parameters derived from `base`: some values replaced by hostile strings (a URL carries only strings). */
export function mutatedQuery(base: Record<string, string>): fc.Arbitrary<Record<string, string>> {
  const keys = Object.keys(base);
  return fc
    .record({
      replace: fc.subarray(keys, { minLength: keys.length ? 1 : 0, maxLength: Math.min(3, keys.length) }),
      values: fc.array(fc.oneof(nastyString, nastyNumber.map(String)), { minLength: 3, maxLength: 3 }),
    })
    .map(({ replace, values }) => {
      const out = { ...base };
      replace.forEach((k, i) => {
        out[k] = values[i] as string;
      });
      return out;
    });
}

/** A path parameter: an id, or anything a URL segment can hold. */
export const pathParam: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('1', '2', '3', '0', '-1'),
  nastyNumber.map(String),
  nastyString,
);

/**
 * A form field's text as a browser posts it: what a user can type or paste (CR/LF, NUL, control characters,
 * very long text, unicode). A form cannot carry a lone surrogate (it is encoded as U+FFFD on the way).
 */
export const formString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber.map(String) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('x'.repeat(70_000), `${'a'.repeat(300)}\r\n`, '\u0000'.repeat(10)),
  },
);

/** What a user may type or paste into a field: line breaks, NUL, other control characters, a lot of text. */
const formFragments = [
  '\r\n',
  '\n',
  '\r',
  '\u0000',
  '\u0001',
  '\t',
  '\u2028',
  'é😀',
  'x'.repeat(300),
  '%0d%0a',
];

/**
 * A form derived from `base`: some fields replaced by hostile text (sometimes several values under one name),
 * sometimes one dropped, sometimes an extra field.
 */
export function mutatedForm(
  base: Record<string, string | string[]>,
): fc.Arbitrary<Record<string, string | string[]>> {
  const keys = Object.keys(base);
  const value = fc.oneof(
    { weight: 5, arbitrary: formString.map((v) => () => v) },
    // the field's own value with something typed or pasted into it (keeps `/path` redirects path-like)
    {
      weight: 4,
      arbitrary: fc.tuple(fc.constantFrom(...formFragments), fc.boolean()).map(
        ([frag, atEnd]) =>
          (old: string) =>
            atEnd ? `${old}${frag}` : `${old.slice(0, 1)}${frag}${old.slice(1)}`,
      ),
    },
    { weight: 1, arbitrary: fc.array(formString, { minLength: 2, maxLength: 3 }).map((v) => () => v) },
  );
  return fc
    .record({
      replace: fc.subarray(keys, { minLength: keys.length ? 1 : 0, maxLength: Math.min(3, keys.length) }),
      values: fc.array(value, { minLength: 3, maxLength: 3 }),
      drop: fc.subarray(keys, { maxLength: Math.min(1, keys.length) }),
      extra: fc.option(fc.tuple(fc.constantFrom('redirectTo', '_fetcher', 'id', 'x'), formString), {
        freq: 4,
      }),
    })
    .map(({ replace, values, drop, extra }) => {
      const out: Record<string, string | string[]> = { ...base };
      replace.forEach((k, i) => {
        const old = base[k];
        out[k] = values[i]!(Array.isArray(old) ? (old[0] ?? '') : (old ?? ''));
      });
      for (const k of drop) delete out[k];
      if (extra) out[extra[0]] = extra[1];
      return out;
    });
}
