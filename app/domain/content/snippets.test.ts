import { describe, expect, it } from 'vitest';
import type { PricingEntry } from '#app/domain/pricing/pricing.server.ts';
import { guideSnippets, pickExampleModel, shellQuote } from './snippets.ts';

const entry = (model_name: string, quota_type: 0 | 1 = 0): PricingEntry => ({
  model_name,
  quota_type,
  model_ratio: 1,
  completion_ratio: 1,
  model_price: 0,
  enable_groups: ['default'],
});

describe('pickExampleModel', () => {
  it('prefers gpt-4o-mini, then a chat model billed by usage, then anything', () => {
    expect(pickExampleModel([entry('gpt-4o'), entry('gpt-4o-mini')])).toBe('gpt-4o-mini');
    expect(
      pickExampleModel([entry('text-embedding-3-small'), entry('dall-e-3', 1), entry('claude-3-haiku')]),
    ).toBe('claude-3-haiku');
    expect(pickExampleModel([entry('dall-e-3', 1)])).toBe('dall-e-3');
    expect(pickExampleModel([])).toBeNull();
  });
});

describe('guideSnippets', () => {
  it('uses the address with /v1 and the model in every example', () => {
    const s = guideSnippets('https://api.example.com', 'claude-3-haiku');
    expect(s.curl).toContain("curl 'https://api.example.com/v1/chat/completions'");
    expect(s.curl).toContain('"model": "claude-3-haiku"');
    expect(s.python).toContain('base_url="https://api.example.com/v1"');
    expect(s.python).toContain('model="claude-3-haiku"');
    expect(s.javascript).toContain('baseURL: "https://api.example.com/v1"');
    expect(s.javascript).toContain('model: "claude-3-haiku"');
    expect(s.stream).toContain('"stream": true');
    expect(s.listModels).toContain('/v1/models');
  });
  it('quotes admin-set values for each language', () => {
    const s = guideSnippets('https://x', `it's"odd`);
    expect(s.curl).toContain(`"model": "it'\\''s\\"odd"`);
    expect(s.python).toContain('model="it\'s\\"odd"');
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
