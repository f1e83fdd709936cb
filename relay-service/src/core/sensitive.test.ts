import { describe, expect, it } from 'vitest';
import { findSensitive, promptText, sensitivePolicy } from './sensitive.ts';

const reader = (values: Record<string, unknown>) =>
  ({ get: (k: string) => values[k] }) as Parameters<typeof sensitivePolicy>[0];

describe('sensitive words', () => {
  it('builds the policy from the options, one word per line, off when disabled or empty', () => {
    const base = {
      CheckSensitiveEnabled: true,
      CheckSensitiveOnPromptEnabled: true,
      CheckSensitiveOnCompletionEnabled: false,
      StopOnSensitiveEnabled: true,
      SensitiveWords: ' Foo \n\nbar baz\n',
    };
    expect(sensitivePolicy(reader(base))).toEqual({
      words: ['foo', 'bar baz'],
      onPrompt: true,
      onCompletion: false,
      stop: true,
    });
    expect(sensitivePolicy(reader({ ...base, CheckSensitiveEnabled: false })).onPrompt).toBe(false);
    expect(sensitivePolicy(reader({ ...base, SensitiveWords: '' })).onPrompt).toBe(false);
  });

  it('finds words case-insensitively', () => {
    expect(findSensitive('say FOO and Bar Baz', ['foo', 'bar baz', 'qux'])).toEqual(['foo', 'bar baz']);
    expect(findSensitive('clean', ['foo'])).toEqual([]);
  });

  it('reads the user text of every endpoint shape', () => {
    expect(
      promptText('chat', {
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'part' },
              { type: 'image_url', image_url: { url: 'x' } },
            ],
          },
        ],
      }),
    ).toBe('sys\npart');
    expect(promptText('completions', { prompt: ['a', 'b'] })).toBe('a\nb');
    expect(promptText('embeddings', { input: 'emb' })).toBe('emb');
    expect(promptText('responses', { instructions: 'i', input: [{ role: 'user', content: 'r' }] })).toBe(
      'i\nr',
    );
    const form = new FormData();
    form.set('prompt', 'spoken');
    expect(promptText('transcriptions', form)).toBe('spoken');
  });
});
