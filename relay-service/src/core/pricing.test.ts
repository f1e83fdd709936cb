import {
  defaultOptionValues,
  type OptionKey,
  type OptionValue,
  type OptionValues,
} from '@switchyard/db/options/registry.ts';
import { describe, expect, it } from 'vitest';
import {
  computeQuota,
  estimateQuota,
  type Price,
  type PriceTables,
  PricingError,
  priceContent,
  priceDetails,
  priceTablesFrom,
  type RatioPrice,
  resolvePrice,
  undatedModelName,
} from './pricing.ts';
import { usage } from './usage.ts';

function reader(overrides: Partial<OptionValues> = {}) {
  const values = { ...defaultOptionValues(), ...overrides };
  return { get: <K extends OptionKey>(key: K): OptionValue<K> => values[key] as OptionValue<K> };
}

const tables = (overrides: Partial<OptionValues> = {}): PriceTables => priceTablesFrom(reader(overrides));

const DEFAULTS = tables({ GroupRatio: { default: 1, vip: 2, svip: 1.5, odd: 0.7 } });

function price(model: string, group = 'default', t: PriceTables = DEFAULTS): Price {
  const p = resolvePrice(t, model, group);
  if (!p) throw new Error(`${model} is unpriced`);
  return p;
}

function ratio(model: string, group = 'default', t: PriceTables = DEFAULTS): RatioPrice {
  const p = price(model, group, t);
  if (p.kind !== 'ratio') throw new Error(`${model} is not ratio priced`);
  return p;
}

describe('priceTablesFrom', () => {
  it('reads every table from the option values', () => {
    const t = tables({ QuotaPerUnit: 1000, PreConsumedQuota: 7, SelfUseModeEnabled: true });
    expect(t.modelRatio['gpt-4o']).toBe(1.25);
    expect(t.completionRatio['gpt-4o']).toBe(4);
    expect(t.modelPrice.mj_imagine).toBe(0.1);
    expect(t.groupRatio).toEqual({ default: 1, vip: 1, svip: 1 });
    expect(t.cacheRatio['gpt-4o']).toBe(0.5);
    expect(t.createCacheRatio['claude-opus-4-20250514']).toBe(1.25);
    expect(t.audioRatio['gpt-4o-realtime-preview']).toBe(8);
    expect(t.audioCompletionRatio['gpt-4o-realtime-preview']).toBe(2);
    expect(t.imageRatio['gpt-image-1']).toBe(2);
    expect(t.quotaPerUnit).toBe(1000);
    expect(t.preConsumedQuota).toBe(7);
    expect(t.selfUseMode).toBe(true);
  });
});

describe('resolvePrice', () => {
  it('prices by ratio with the completion, cache and audio ratios of the model', () => {
    expect(price('claude-sonnet-4-20250514')).toEqual({
      kind: 'ratio',
      pricedAs: 'claude-sonnet-4-20250514',
      modelRatio: 1.5,
      completionRatio: 5,
      groupRatio: 1,
      cacheRatio: 0.1,
      cacheWriteRatio: 1.25,
      // No audio entries: audio is priced like text (input 1, output at the completion ratio).
      audioRatio: 1,
      audioCompletionRatio: 5,
      imageRatio: 1,
    });
  });

  it('defaults the completion, cache and cache-write ratios to 1', () => {
    const t = tables({ ModelRatio: { 'my-model': 2 }, GroupRatio: { default: 1 } });
    expect(ratio('my-model', 'default', t)).toMatchObject({
      modelRatio: 2,
      completionRatio: 1,
      cacheRatio: 1,
      cacheWriteRatio: 1,
      audioRatio: 1,
      audioCompletionRatio: 1,
    });
  });

  it('lets a fixed price win over a ratio', () => {
    const t = tables({ ModelPrice: { 'gpt-4o': 0.01 }, GroupRatio: { vip: 2 } });
    expect(resolvePrice(t, 'gpt-4o', 'vip')).toEqual({
      kind: 'fixed',
      pricedAs: 'gpt-4o',
      modelPrice: 0.01,
      groupRatio: 2,
    });
  });

  it('falls back from a dated snapshot to its base name, exact entries first', () => {
    expect(undatedModelName('gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(undatedModelName('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet');
    expect(undatedModelName('gpt-4-0613')).toBe('gpt-4');
    expect(undatedModelName('gpt-4o')).toBeNull();
    expect(undatedModelName('gpt-4-32k')).toBeNull();
    expect(undatedModelName('gemini-2.0-flash-001')).toBeNull();

    expect(ratio('gpt-4o-2024-08-06')).toMatchObject({
      pricedAs: 'gpt-4o',
      modelRatio: 1.25,
      cacheRatio: 0.5,
    });
    expect(ratio('gpt-3.5-turbo-0125')).toMatchObject({ pricedAs: 'gpt-3.5-turbo', completionRatio: 3 });
    // An exact ratio beats the base name's fixed price.
    const t = tables({
      ModelRatio: { 'gpt-4o-2024-08-06': 2 },
      ModelPrice: { 'gpt-4o': 0.5 },
      GroupRatio: { default: 1 },
    });
    expect(ratio('gpt-4o-2024-08-06', 'default', t)).toMatchObject({
      pricedAs: 'gpt-4o-2024-08-06',
      modelRatio: 2,
    });
    expect(price('gpt-4o-2024-11-20', 'default', t)).toMatchObject({ kind: 'fixed', modelPrice: 0.5 });
  });

  it('returns null for an unpriced model', () => {
    expect(resolvePrice(DEFAULTS, 'no-such-model', 'default')).toBeNull();
    // "gpt-4o-mini-2024-07-18" falls back to gpt-4o-mini, never to gpt-4o; a non-date suffix is not stripped.
    expect(ratio('gpt-4o-mini-2024-07-18').pricedAs).toBe('gpt-4o-mini');
    expect(resolvePrice(DEFAULTS, 'gpt-4o-foo', 'default')).toBeNull();
  });

  it('makes unpriced models free in self-use mode', () => {
    const t = tables({ SelfUseModeEnabled: true });
    const p = ratio('no-such-model', 'default', t);
    expect(p).toMatchObject({ kind: 'ratio', modelRatio: 0, pricedAs: '', unpriced: true });
    expect(computeQuota(p, usage({ promptTokens: 5000, completionTokens: 5000 }), t)).toBe(0);
    expect(estimateQuota(p, { promptTokens: 5000 }, t)).toBe(0);
    // Priced models keep their price in self-use mode.
    expect(ratio('gpt-4o', 'default', t).modelRatio).toBe(1.25);
  });

  it('throws on a group missing from GroupRatio (the relay refuses those earlier)', () => {
    expect(() => resolvePrice(DEFAULTS, 'gpt-4o', 'nope')).toThrow(PricingError);
    expect(() => resolvePrice(DEFAULTS, 'no-such-model', 'nope')).toThrow(/GroupRatio/);
    expect(() => resolvePrice(DEFAULTS, 'gpt-4o', 'toString')).toThrow(PricingError);
  });
});

describe('computeQuota', () => {
  it('matches the gateway-behaviour worked example', () => {
    // gpt-4o: (1000 + 500·4)·1.25·1 = 3750
    expect(
      computeQuota(price('gpt-4o'), usage({ promptTokens: 1000, completionTokens: 500 }), DEFAULTS),
    ).toBe(3750);
  });

  it('applies the completion ratio', () => {
    // gpt-3.5-turbo: (1000 + 1000·3)·0.25 = 1000
    expect(
      computeQuota(price('gpt-3.5-turbo'), usage({ promptTokens: 1000, completionTokens: 1000 }), DEFAULTS),
    ).toBe(1000);
    // Without a CompletionRatio entry, output costs like input: (1000 + 1000·1)·2 = 4000
    const t = tables({ ModelRatio: { 'my-model': 2 }, GroupRatio: { default: 1 } });
    expect(
      computeQuota(price('my-model', 'default', t), usage({ promptTokens: 1000, completionTokens: 1000 }), t),
    ).toBe(4000);
  });

  it('applies the group ratio', () => {
    // gpt-4o in svip (1.5): (1000 + 500·4)·1.25·1.5 = 5625
    expect(
      computeQuota(price('gpt-4o', 'svip'), usage({ promptTokens: 1000, completionTokens: 500 }), DEFAULTS),
    ).toBe(5625);
  });

  it('charges a fixed price per call, times n for images', () => {
    // dall-e-3 ($0.04) in vip (2), n = 2: 0.04·500000·2·2 = 80000
    const p = price('dall-e-3', 'vip');
    expect(p.kind).toBe('fixed');
    expect(computeQuota(p, usage({}), DEFAULTS, { calls: 2 })).toBe(80000);
    // One call, usage ignored: 0.04·500000·2 = 40000
    expect(computeQuota(p, usage({ promptTokens: 99 }), DEFAULTS)).toBe(40000);
    // mj_describe ($0.05) in default: 25000
    expect(computeQuota(price('mj_describe'), usage({}), DEFAULTS)).toBe(25000);
  });

  it('discounts cached reads (OpenAI 0.5)', () => {
    // gpt-4o, 1000 prompt of which 600 cached, 100 completion: (400 + 600·0.5 + 100·4)·1.25 = 1375
    const u = usage({ promptTokens: 1000, cachedTokens: 600, completionTokens: 100 });
    expect(computeQuota(price('gpt-4o'), u, DEFAULTS)).toBe(1375);
  });

  it('charges cache writes (Claude 1.25) and cached reads (Claude 0.1)', () => {
    // claude-sonnet-4: prompt 2000 = 200 plain + 1000 cached + 800 written, 100 completion:
    // (200 + 1000·0.1 + 800·1.25 + 100·5)·1.5 = 1800·1.5 = 2700
    const u = usage({ promptTokens: 2000, cachedTokens: 1000, cacheWriteTokens: 800, completionTokens: 100 });
    expect(computeQuota(price('claude-sonnet-4-20250514'), u, DEFAULTS)).toBe(2700);
  });

  it('bills reasoning tokens as completion', () => {
    // o3-mini: 100 prompt, 1000 completion of which 900 reasoning: (100 + 1000·4)·0.55 = 2255
    const p = price('o3-mini');
    const withReasoning = usage({ promptTokens: 100, completionTokens: 1000, reasoningTokens: 900 });
    expect(computeQuota(p, withReasoning, DEFAULTS)).toBe(2255);
    expect(computeQuota(p, { ...withReasoning, reasoningTokens: 0 }, DEFAULTS)).toBe(2255);
  });

  it('prices audio tokens with the audio ratios', () => {
    // gpt-4o-realtime-preview (M 2.5, completion 4, audio 8, audio completion 2):
    // prompt 1000 with 600 audio, completion 300 with 200 audio:
    // (400 + 600·8 + 100·4 + 200·8·2)·2.5 = 8800·2.5 = 22000
    const u = usage({
      promptTokens: 1000,
      audioPromptTokens: 600,
      completionTokens: 300,
      audioCompletionTokens: 200,
    });
    expect(computeQuota(price('gpt-4o-realtime-preview'), u, DEFAULTS)).toBe(22000);
    // The 2024-10-01 snapshot: ModelRatio falls back to the base (2.5), AudioRatio has its own entry (20):
    // (400 + 600·20 + 100·4 + 200·20·2)·2.5 = 20800·2.5 = 52000
    expect(computeQuota(price('gpt-4o-realtime-preview-2024-10-01'), u, DEFAULTS)).toBe(52000);
  });

  it('prices gpt-image-1: text input at the model ratio, image input at the image ratio, output at completion', () => {
    // Defaults: M 2.5 ($5/M text), ImageRatio 2 ($10/M image input), CompletionRatio 8 ($40/M output).
    // The call: 10 text tokens in, 1,056 out: (10 + 1056·8)·2.5 = 21145.
    const p = price('gpt-image-1');
    expect(p).toMatchObject({ modelRatio: 2.5, completionRatio: 8, imageRatio: 2 });
    expect(computeQuota(p, usage({ promptTokens: 10, completionTokens: 1056 }), DEFAULTS)).toBe(21145);
    // An edit: 12 text + 323 image tokens in, 272 out: (12 + 323·2 + 272·8)·2.5 = 2834·2.5 = 7085.
    const edit = usage({ promptTokens: 335, imageTokens: 323, completionTokens: 272 });
    expect(computeQuota(p, edit, DEFAULTS)).toBe(7085);
    // A model without an image ratio prices image tokens as text: gpt-4o (335 + 272·4)·1.25 = 1778.75 → 1779.
    expect(computeQuota(price('gpt-4o'), edit, DEFAULTS)).toBe(1779);
  });

  it('charges nothing for zero usage and at least 1 for tiny usage', () => {
    expect(computeQuota(price('gpt-4o'), usage({}), DEFAULTS)).toBe(0);
    // gpt-4o-mini, 1 prompt token: 1·0.075 = 0.075, rounds to 0, floored to 1
    expect(computeQuota(price('gpt-4o-mini'), usage({ promptTokens: 1 }), DEFAULTS)).toBe(1);
    // A zero ratio is free, not 1.
    const t = tables({ ModelRatio: { free: 0 }, GroupRatio: { default: 1 } });
    expect(computeQuota(price('free', 'default', t), usage({ promptTokens: 1000 }), t)).toBe(0);
  });

  it('never goes negative when cached tokens exceed the prompt (new-api #5005)', () => {
    // gpt-4o, prompt 100 but 150 reported cached: (0 + 150·0.5)·1.25 = 93.75 → 94
    const u = usage({ promptTokens: 100, cachedTokens: 150 });
    expect(computeQuota(price('gpt-4o'), u, DEFAULTS)).toBe(94);
    // Audio output above the completion: (0·4 + 50·8·2)·2.5 = 2000
    const a = usage({ completionTokens: 10, audioCompletionTokens: 50 });
    expect(computeQuota(price('gpt-4o-realtime-preview'), a, DEFAULTS)).toBe(2000);
  });

  it('rounds exact decimals where naive float math is off by one', () => {
    // gpt-4o in a 0.7 group, 36 prompt tokens: 36·1.25·0.7 = 31.5 exactly → 32.
    expect(Math.round(36 * 1.25 * 0.7)).toBe(31); // float gives 31.499999999999996
    expect(computeQuota(price('gpt-4o', 'odd'), usage({ promptTokens: 36 }), DEFAULTS)).toBe(32);
    // gpt-4o-mini in a 0.7 group, 600 tokens: 600·0.075·0.7 = 31.5 → 32 (float: 31.499999999999996)
    expect(Math.round(600 * 0.075 * 0.7)).toBe(31);
    expect(computeQuota(price('gpt-4o-mini', 'odd'), usage({ promptTokens: 600 }), DEFAULTS)).toBe(32);
    // Fixed: $0.0001·500000·1.15 = 57.5 exactly → 58 (float: 57.49999999999999)
    expect(Math.round(0.0001 * 500000 * 1.15)).toBe(57);
    const t = tables({ ModelPrice: { x: 0.0001 }, GroupRatio: { g: 1.15 } });
    expect(computeQuota(price('x', 'g', t), usage({}), t)).toBe(58);
  });

  it('reads ratios written in exponent form', () => {
    // 1e-7·1e7 tokens = 1; 2e21 ratio stays exact: 3·2e21 = 6e21
    const t = tables({ ModelRatio: { tiny: 1e-7, huge: 2e21 }, GroupRatio: { default: 1 } });
    expect(computeQuota(price('tiny', 'default', t), usage({ promptTokens: 25_000_000 }), t)).toBe(3); // 2.5 → 3
    expect(computeQuota(price('huge', 'default', t), usage({ promptTokens: 3 }), t)).toBe(6e21);
  });
});

describe('estimateQuota', () => {
  it('holds the prompt plus max_tokens at the completion ratio', () => {
    // gpt-4o, 100 prompt, max_tokens 200: (100 + 200·4)·1.25 = 1125
    expect(estimateQuota(price('gpt-4o'), { promptTokens: 100, maxTokens: 200 }, DEFAULTS)).toBe(1125);
    // gpt-4o-mini, 1 + 1·4 tokens: 5·0.075 = 0.375 → rounded up to 1
    expect(estimateQuota(price('gpt-4o-mini'), { promptTokens: 1, maxTokens: 1 }, DEFAULTS)).toBe(1);
  });

  it('holds PreConsumedQuota completion tokens without max_tokens', () => {
    // gpt-4o, 100 prompt + 500 (PreConsumedQuota) at completion 4: (100 + 2000)·1.25 = 2625
    expect(estimateQuota(price('gpt-4o'), { promptTokens: 100 }, DEFAULTS)).toBe(2625);
    // In svip (1.5): 2625·1.5 = 3937.5 → 3938
    expect(estimateQuota(price('gpt-4o', 'svip'), { promptTokens: 100 }, DEFAULTS)).toBe(3938);
  });

  it('bounds the settled cost of any completion within max_tokens', () => {
    for (const model of ['gpt-4o', 'o3-mini', 'deepseek-reasoner', 'gemini-2.5-pro']) {
      const p = price(model, 'svip');
      const hold = estimateQuota(p, { promptTokens: 321, maxTokens: 777 }, DEFAULTS);
      for (const completionTokens of [0, 1, 400, 777]) {
        const u = usage({
          promptTokens: 321,
          completionTokens,
          cachedTokens: 100,
          reasoningTokens: completionTokens,
        });
        expect(computeQuota(p, u, DEFAULTS), `${model} ${completionTokens}`).toBeLessThanOrEqual(hold);
      }
    }
  });

  it('bounds image input at the image ratio when any prompt token may be an image token', () => {
    const p = price('gpt-image-1');
    const hold = estimateQuota(p, { promptTokens: 4096 + 3, maxTokens: 6240, outputs: 1 }, DEFAULTS);
    // Every prompt token an image token, the whole output used.
    const worst = usage({ promptTokens: 4099, imageTokens: 4099, completionTokens: 6240 });
    expect(computeQuota(p, worst, DEFAULTS)).toBeLessThanOrEqual(hold);
    expect(hold).toBe(Math.ceil((4099 * 2 + 6240 * 8) * 2.5));
  });

  it('equals the charge for fixed prices', () => {
    expect(estimateQuota(price('dall-e-3', 'vip'), { promptTokens: 50, calls: 2 }, DEFAULTS)).toBe(80000);
    expect(estimateQuota(price('suno_lyrics'), { promptTokens: 50 }, DEFAULTS)).toBe(5000);
  });
});

describe('priceDetails and priceContent', () => {
  it('writes new-api log keys for a ratio-priced call', () => {
    const u = usage({ promptTokens: 2000, cachedTokens: 1000, cacheWriteTokens: 800, completionTokens: 100 });
    const other = priceDetails(price('claude-sonnet-4-20250514'), u, {
      frtMs: 412,
      channelIds: [3, 7],
      requestModel: 'claude-sonnet-4-20250514',
      upstreamModel: 'claude-sonnet-4-20250514',
    });
    expect(other).toEqual({
      model_ratio: 1.5,
      group_ratio: 1,
      completion_ratio: 5,
      cache_tokens: 1000,
      cache_ratio: 0.1,
      cache_creation_tokens: 800,
      cache_creation_ratio: 1.25,
      model_price: -1,
      reasoning_tokens: 0,
      frt: 412,
      admin_info: { use_channel: ['3', '7'] },
    });
  });

  it('marks mapped models, local usage, reasoning effort and audio', () => {
    const u = usage({
      promptTokens: 1000,
      audioPromptTokens: 600,
      completionTokens: 300,
      audioCompletionTokens: 200,
      reasoningTokens: 5,
    });
    const other = priceDetails(price('gpt-4o-realtime-preview'), u, {
      frtMs: 90,
      channelIds: [1],
      requestModel: 'realtime',
      upstreamModel: 'gpt-4o-realtime-preview',
      usageEstimated: true,
      reasoningEffort: 'high',
    });
    expect(other).toMatchObject({
      model_ratio: 2.5,
      model_price: -1,
      reasoning_tokens: 5,
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-realtime-preview',
      usage_estimated: true,
      reasoning_effort: 'high',
      audio: true,
      text_input: 400,
      text_output: 100,
      audio_input: 600,
      audio_output: 200,
      audio_ratio: 8,
      audio_completion_ratio: 2,
    });
  });

  it('writes the fixed price and no audio keys for a per-call model', () => {
    const other = priceDetails(price('dall-e-3', 'vip'), usage({}), { frtMs: 1, channelIds: [] });
    expect(other).toMatchObject({
      model_price: 0.04,
      model_ratio: 0,
      group_ratio: 2,
      admin_info: { use_channel: [] },
    });
    expect(other).not.toHaveProperty('audio_ratio');
    expect(other).not.toHaveProperty('is_model_mapped');
    expect(other).not.toHaveProperty('usage_estimated');
  });

  it('summarises the price in words', () => {
    expect(priceContent(price('gpt-4o'))).toBe('model ratio 1.25, completion ratio 4, group ratio 1');
    expect(priceContent(price('dall-e-3', 'vip'))).toBe('model price $0.04, group ratio 2');
    expect(priceContent(price('gpt-4o'), usage({ promptTokens: 10, cachedTokens: 5 }))).toBe(
      'model ratio 1.25, completion ratio 4, group ratio 1, cache ratio 0.5',
    );
    expect(priceContent(ratio('x', 'default', tables({ SelfUseModeEnabled: true })))).toBe(
      'model ratio 0 (unpriced, self-use mode), completion ratio 1, group ratio 1',
    );
  });
});
