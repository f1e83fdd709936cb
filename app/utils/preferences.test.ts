import { describe, expect, it } from 'vitest';
import { isTheme, parsePageSize } from './preferences.ts';

describe('preferences', () => {
  it('accepts only light and dark', () => {
    expect(isTheme('dark')).toBe(true);
    expect(isTheme('light')).toBe(true);
    expect(isTheme('blue')).toBe(false);
  });

  it('accepts only the seed page sizes', () => {
    expect(parsePageSize('20')).toBe(20);
    expect(parsePageSize(100)).toBe(100);
    expect(parsePageSize('15')).toBeNull();
  });
});
