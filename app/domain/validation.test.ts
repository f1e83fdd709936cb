import type { TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError } from './errors.ts';
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
