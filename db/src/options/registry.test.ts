import { describe, expect, it } from 'vitest';
import {
  defaultOptionValues,
  isSecretOption,
  normalizeOptionInput,
  OPTION_KEYS,
  OPTIONS,
  OptionValidationError,
  parseOptionValue,
  serializeOptionValue,
} from './registry.ts';

describe('options registry', () => {
  it('parses every default', () => {
    const values = defaultOptionValues();
    expect(Object.keys(values)).toHaveLength(OPTION_KEYS.length);
    expect(values.Price).toBe(7.3);
    expect(values.MinTopUp).toBe(1);
    expect(values.QuotaPerUnit).toBe(500000);
    expect(values.DataExportInterval).toBe(5);
    expect(values.DataExportDefaultTime).toBe('hour');
    expect(values.ModelRequestRateLimitEnabled).toBe(false);
    expect(values.ModelRequestRateLimitCount).toBe(0);
    expect(values.ModelRequestRateLimitSuccessCount).toBe(1000);
    expect(values.ModelRequestRateLimitDurationMinutes).toBe(1);
    expect(values['claude.thinking_adapter_enabled']).toBe(true);
    expect(values['claude.thinking_adapter_budget_tokens_percentage']).toBe(0.8);
    expect(values['claude.default_max_tokens']).toEqual({ default: 8192 });
    expect(values['gemini.safety_settings']).toEqual({ default: 'OFF' });
    expect(values['gemini.version_settings']).toEqual({ default: 'v1beta' });
    expect(values.SMTPPort).toBe(587);
    expect(values.GroupRatio).toEqual({ default: 1, vip: 1, svip: 1 });
    expect(values.UserUsableGroups).toEqual({ default: '默认分组', vip: 'vip分组' });
    expect(values.PasswordLoginEnabled).toBe(true);
    expect(values.RegisterEnabled).toBe(true);
    expect(values.LogConsumeEnabled).toBe(true);
    expect(values.PreConsumedQuota).toBe(500);
    expect(values.SystemName).toBe('Switchyard');
    expect(values.apiAddressList).toEqual([]);
    expect(values.TopupConfig).toEqual([]);
    expect(values.Chats.length).toBeGreaterThan(0);
    expect(values.QuotaRemindThreshold).toBe(1000);
    expect(values.AutomaticDisableKeywords).toContain('You exceeded your current quota');
  });

  it('marks keys, tokens, secrets and private keys as secret', () => {
    for (const key of [
      'SMTPToken',
      'WorkerValidKey',
      'GitHubClientSecret',
      'LinuxDOClientSecret',
      'WeChatServerToken',
      'TelegramBotToken',
      'TurnstileSecretKey',
      'AlipayPrivateKey',
      'WeChatPayApiV3Key',
      'WeChatPayApiCertKey',
    ]) {
      expect(isSecretOption(key), key).toBe(true);
    }
    for (const key of ['GitHubClientId', 'TurnstileSiteKey', 'SystemName', 'Price']) {
      expect(isSecretOption(key), key).toBe(false);
    }
    for (const key of OPTION_KEYS) {
      if (/(Secret|Token|PrivateKey|ValidKey|V3Key|CertKey|Password)$/.test(key)) {
        expect(OPTIONS[key].secret, key).toBe(true);
      }
    }
  });

  it('parses and validates booleans', () => {
    expect(parseOptionValue('RegisterEnabled', 'false')).toBe(false);
    expect(() => parseOptionValue('RegisterEnabled', 'yes')).toThrow(OptionValidationError);
    expect(() => parseOptionValue('RegisterEnabled', 'True')).toThrow(/'true' or 'false'/);
  });

  it('parses numbers and enforces minimums', () => {
    expect(parseOptionValue('DataExportInterval', '10')).toBe(10);
    expect(() => parseOptionValue('DataExportInterval', '0')).toThrow(/at least 1/);
    expect(() => parseOptionValue('DataExportInterval', '1.5')).toThrow(/integer/);
    expect(() => parseOptionValue('MinTopUp', '0')).toThrow(/at least 1/);
    expect(() => parseOptionValue('ModelRequestRateLimitSuccessCount', '0')).toThrow(/at least 1/);
    expect(parseOptionValue('Price', '7.5')).toBe(7.5);
    expect(() => parseOptionValue('Price', 'abc')).toThrow(/number/);
    expect(() => parseOptionValue('Price', '')).toThrow(/number/);
    expect(() => parseOptionValue('claude.thinking_adapter_budget_tokens_percentage', '1.5')).toThrow(
      /at most 1/,
    );
    expect(() => parseOptionValue('claude.thinking_adapter_budget_tokens_percentage', '0.05')).toThrow(
      /at least 0.1/,
    );
  });

  it('checks the models-tab JSON (seed 000): thresholds, API versions, positive max tokens, header objects', () => {
    expect(() => parseOptionValue('claude.default_max_tokens', '{"default":8192')).toThrow(
      /not a valid JSON string/,
    );
    expect(parseOptionValue('claude.default_max_tokens', '{"default":4096,"claude-x":100}')).toEqual({
      default: 4096,
      'claude-x': 100,
    });
    expect(() => parseOptionValue('claude.default_max_tokens', '{"default":0}')).toThrow(/positive integer/);
    expect(() => parseOptionValue('claude.default_max_tokens', '{"default":1.5}')).toThrow(
      /positive integer/,
    );
    expect(() => parseOptionValue('claude.default_max_tokens', '[1]')).toThrow(/JSON object/);
    expect(
      parseOptionValue('claude.model_headers_settings', '{"m":{"anthropic-beta":["a","b"],"x-y":"z"}}'),
    ).toEqual({
      m: { 'anthropic-beta': ['a', 'b'], 'x-y': 'z' },
    });
    expect(() => parseOptionValue('claude.model_headers_settings', '{"m":"x"}')).toThrow(/must be an object/);
    expect(() => parseOptionValue('claude.model_headers_settings', '{"m":{"a b":"x"}}')).toThrow(
      /header name/,
    );
    expect(() => parseOptionValue('claude.model_headers_settings', '{"m":{"a":1}}')).toThrow(
      /must be a string/,
    );
    expect(parseOptionValue('gemini.safety_settings', '{"default":"BLOCK_NONE"}')).toEqual({
      default: 'BLOCK_NONE',
    });
    expect(() => parseOptionValue('gemini.safety_settings', '{"default":"NEVER"}')).toThrow(
      /must be one of OFF/,
    );
    expect(parseOptionValue('gemini.version_settings', '{"default":"v1","gemini-x":"v1alpha"}')).toBeTruthy();
    expect(() => parseOptionValue('gemini.version_settings', '{"default":"v2"}')).toThrow(
      /v1, v1beta, v1alpha/,
    );
  });

  it('requires valid JSON of the right shape', () => {
    expect(parseOptionValue('GroupRatio', '{"default":1,"vip":2}')).toEqual({ default: 1, vip: 2 });
    expect(() => parseOptionValue('GroupRatio', '{bad')).toThrow(/not a valid JSON string/);
    expect(() => parseOptionValue('GroupRatio', '{"vip":"x"}')).toThrow(/number/);
    expect(() => parseOptionValue('GroupRatio', '[1]')).toThrow(/object/);
    expect(() => parseOptionValue('TopupConfig', '[10,"a"]')).toThrow(/array/);
    expect(parseOptionValue('apiAddressList', '[{"title":"a","url":"https://x","line":"1"}]')).toHaveLength(
      1,
    );
  });

  it('restricts enumerated strings', () => {
    expect(parseOptionValue('DataExportDefaultTime', 'week')).toBe('week');
    expect(() => parseOptionValue('DataExportDefaultTime', 'month')).toThrow(/one of hour, day, week/);
  });

  it('serializes typed values and round-trips', () => {
    expect(serializeOptionValue('RegisterEnabled', false)).toBe('false');
    expect(serializeOptionValue('Price', 7.3)).toBe('7.3');
    expect(serializeOptionValue('GroupRatio', { default: 1 })).toBe('{"default":1}');
    expect(() => serializeOptionValue('DataExportInterval', 0)).toThrow(/at least 1/);
    for (const key of OPTION_KEYS) {
      const v = parseOptionValue(key, OPTIONS[key].default);
      expect(parseOptionValue(key, serializeOptionValue(key, v))).toEqual(v);
    }
  });

  it('parses the price-table defaults, with cache and audio ratios for priced models only', () => {
    const v = defaultOptionValues();
    expect(v.CacheRatio['gpt-4o']).toBe(0.5);
    expect(v.CacheRatio['deepseek-chat']).toBe(0.1);
    expect(v.CacheRatio['gemini-2.5-pro']).toBe(0.25);
    expect(v.CreateCacheRatio['claude-sonnet-4-20250514']).toBe(1.25);
    expect(v.AudioRatio['gpt-4o-realtime-preview']).toBe(8);
    expect(v.AudioCompletionRatio['gpt-4o-audio-preview']).toBe(2);
    expect(v.ModelPrice['dall-e-3']).toBe(0.04);
    // Every Claude model is cached at 0.1 and written at 1.25; every Gemini model read at 0.25.
    for (const model of Object.keys(v.ModelRatio)) {
      if (model.startsWith('claude-')) {
        expect(v.CacheRatio[model], model).toBe(0.1);
        expect(v.CreateCacheRatio[model], model).toBe(1.25);
      }
      if (model.startsWith('gemini-')) expect(v.CacheRatio[model], model).toBe(0.25);
    }
    // A ratio for a model that has no ModelRatio would never be used.
    for (const key of ['CacheRatio', 'CreateCacheRatio', 'AudioCompletionRatio'] as const) {
      for (const model of Object.keys(v[key]))
        expect(v.ModelRatio[model], `${key} ${model}`).toBeGreaterThan(0);
    }
    for (const key of ['CacheRatio', 'CreateCacheRatio', 'AudioRatio', 'AudioCompletionRatio'] as const) {
      expect(parseOptionValue(key, '{}')).toEqual({});
      expect(() => parseOptionValue(key, '{"gpt-4o":-1}')).toThrow(/>= 0/);
      expect(() => parseOptionValue(key, '[1]')).toThrow(/JSON object/);
    }
  });

  it('normalizes console input', () => {
    expect(normalizeOptionInput('RetryTimes', ' 3 ')).toEqual({ raw: '3', value: 3 });
    expect(normalizeOptionInput('RetryTimes', 2)).toEqual({ raw: '2', value: 2 });
    expect(normalizeOptionInput('RegisterEnabled', true)).toEqual({ raw: 'true', value: true });
    expect(normalizeOptionInput('GroupRatio', '{ "default": 1 }').raw).toBe('{ "default": 1 }');
    expect(() => normalizeOptionInput('NoSuchKey' as never, 'x')).toThrow(/unknown option/);
  });
});
