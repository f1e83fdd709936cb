import { describe, expect, it } from 'vitest';
import { presetModelsForType } from '#app/domain/channels/constants.ts';
import { MIDJOURNEY_MODELS } from './constants.ts';

describe('presetModelsForType', () => {
  it('offers the mj_* models for Midjourney Proxy (2) and Midjourney Proxy Plus (5) only', () => {
    expect(presetModelsForType(2)).toContain('mj_imagine');
    expect(presetModelsForType(5)).toContain('mj_upscale');
    expect(presetModelsForType(5)).toContain('swap_face');
    expect(presetModelsForType(1)).toEqual([]);
    expect(presetModelsForType(36)).toEqual(['suno_music', 'suno_lyrics']);
  });

  it('names every action the way the relay prices it (mj_<action lowercased>, swap_face)', () => {
    for (const m of MIDJOURNEY_MODELS) expect(m).toMatch(/^(mj_[a-z_]+|swap_face)$/);
    expect(new Set(MIDJOURNEY_MODELS).size).toBe(MIDJOURNEY_MODELS.length);
  });
});
