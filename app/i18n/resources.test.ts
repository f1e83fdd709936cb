import { describe, expect, it } from 'vitest';
import { i18nConfig } from './config.ts';
import { resources } from './resources.ts';

function keys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
}

describe('translations', () => {
  it('zh is the fallback and en has exactly the same keys, none empty', () => {
    expect(i18nConfig.fallbackLng).toBe('zh');
    expect(i18nConfig.supportedLngs).toEqual(['zh', 'en']);
    expect(keys(resources.en.common).sort()).toEqual(keys(resources.zh.common).sort());
    for (const lng of ['zh', 'en'] as const) {
      for (const key of keys(resources[lng].common)) {
        const value = key
          .split('.')
          .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], resources[lng].common);
        expect(typeof value === 'string' && value.length > 0, `${lng}:${key}`).toBe(true);
      }
    }
  });

  it('carries the seed 000 §8 messages', () => {
    expect(resources.en.common.errors).toMatchObject({
      tooManyRequests: 'Too many requests, try again later',
      internal: 'Internal server error, contact administrator',
      demoOnly: 'This site is a demo only, no server',
    });
    expect(resources.zh.common.notFound.body).toBe('页面不存在，请检查你的浏览器地址是否正确');
  });
});
