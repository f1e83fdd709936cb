import type { TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError } from './errors.ts';
import { INT2, INT4, INT8, intInput, nullAsAbsent } from './input.ts';
import { parseInput } from './validation.ts';

const dictionary: Record<string, string> = {
  'demo:errors.invalidInput': 'please check input',
  'demo:errors.nameRequired': 'name is required',
};
const t = ((key: string, opts?: { defaultValue?: string }) =>
  dictionary[key] ?? opts?.defaultValue ?? key) as TFunction;
const Schema = z.object({
  name: z.string().min(1, 'errors.nameRequired'),
  count: z.number().int('errors.whole'),
});

function caught(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('parseInput', () => {
  it('returns the parsed value', () => {
    expect(parseInput(t, Schema, { name: 'a', count: 2 }, { ns: 'demo', messages: 'raw' })).toEqual({
      name: 'a',
      count: 2,
    });
  });

  it('raw: keeps schema messages per field and says the generic message', () => {
    const e = caught(() => parseInput(t, Schema, { name: '', count: 1.5 }, { ns: 'demo', messages: 'raw' }));
    expect(e.message).toBe('please check input');
    expect(e.fieldErrors).toEqual({ name: ['errors.nameRequired'], count: ['errors.whole'] });
  });

  it('translated: translates each message (unknown keys fall back) and says the first one', () => {
    const e = caught(() =>
      parseInput(
        t,
        Schema,
        { name: '', count: 1.5 },
        { ns: 'demo', messages: 'translated', rootKey: 'form' },
      ),
    );
    expect(e.message).toBe('name is required');
    expect(e.fieldErrors).toEqual({ name: ['name is required'], count: ['please check input'] });
    const root = caught(() =>
      parseInput(t, z.string(), 1, { ns: 'demo', messages: 'translated', rootKey: 'form' }),
    );
    expect(Object.keys(root.fieldErrors)).toEqual(['form']);
  });
});

describe('the input layer under the schemas (issue 13, item 7)', () => {
  const nulT = ((key: string) => (key === 'common:errors.nulText' ? 'no NUL' : key)) as TFunction;
  const Loose = z.looseObject({ name: z.string().optional() });

  it('refuses U+0000 in any field, nested value or key, naming the field, before the schema', () => {
    for (const [value, field] of [
      [{ name: 'a\u0000b' }, 'name'],
      [{ tags: ['ok', 'x\u0000'] }, 'tags.1'],
      [{ deep: { er: '\u0000' } }, 'deep.er'],
      [{ 'k\u0000': 1 }, '_'],
    ] as const) {
      const e = caught(() => parseInput(nulT, Loose, value, { ns: 'demo', messages: 'raw' }));
      expect(e.message).toBe('no NUL');
      expect(Object.keys(e.fieldErrors)).toEqual([field]);
    }
    expect(parseInput(nulT, Loose, { name: 'a\ud800' }, { ns: 'demo', messages: 'raw' })).toEqual({
      name: 'a\ud800',
    });
  });

  it('intInput: integers within the column range, from numbers or decimal text only', () => {
    const int4 = intInput(INT4);
    for (const ok of [0, -1, '42', ' 7 ', INT4.max, INT4.min]) expect(int4.safeParse(ok).success).toBe(true);
    for (const bad of [
      1.5,
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 40,
      '1e3',
      '1.0',
      'x',
      '',
      true,
      null,
      {},
      Number.NaN,
    ])
      expect(int4.safeParse(bad).success, String(bad)).toBe(false);
    expect(intInput(INT8).safeParse(2 ** 40).success).toBe(true);
    expect(intInput(INT8).safeParse(2 ** 53).success).toBe(false);
    expect(intInput(INT2).safeParse(32_768).success).toBe(false);
  });
});

describe('null means absent for optional fields (issue 23 item 9)', () => {
  const Schema = z.object({
    required: z.string(),
    withDefault: z.string().trim().default(''),
    optional: z.string().optional(),
    count: intInput(INT4).optional(),
    nullable: z.string().nullable().default('kept'),
    nested: z
      .object({
        inner: z.string().default('x'),
        list: z.array(z.object({ v: z.number().default(1) })).optional(),
      })
      .optional(),
  });
  const opts = { ns: 'demo', messages: 'raw' } as const;

  it('drops null from a field that may be left out and does not take null itself', () => {
    expect(
      parseInput(
        t,
        Schema,
        {
          required: 'r',
          withDefault: null,
          optional: null,
          count: null,
          nullable: null,
          nested: { inner: null, list: [{ v: null }, { v: 2 }] },
        },
        opts,
      ),
    ).toEqual({
      required: 'r',
      withDefault: '',
      nullable: null,
      nested: { inner: 'x', list: [{ v: 1 }, { v: 2 }] },
    });
  });

  it('still refuses null for a required field, naming it', () => {
    const e = caught(() => parseInput(t, Schema, { required: null }, opts));
    expect(Object.keys(e.fieldErrors)).toEqual(['required']);
    expect(
      caught(() => parseInput(t, z.object({ n: intInput(INT4) }), { n: null }, opts)).fieldErrors,
    ).toHaveProperty('n');
  });

  it('changes nothing in place and leaves other values alone', () => {
    const value = { required: 'r', optional: null };
    expect(nullAsAbsent(Schema, value)).toEqual({ required: 'r' });
    expect(value).toEqual({ required: 'r', optional: null });
    const same = { required: 'r', optional: 'o' };
    expect(nullAsAbsent(Schema, same)).toBe(same);
    expect(nullAsAbsent(Schema, null)).toBe(null);
    const form = new FormData();
    expect(nullAsAbsent(Schema, form)).toBe(form);
  });
});
