/** The M3E fake answers the openai SDK's embeddings call and nothing else. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeM3e, startFakeM3e } from './m3e-upstream.ts';

let fake: FakeM3e;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeM3e({ keys: ['m3e-good'] });
  client = new OpenAI({ baseURL: fake.url, apiKey: 'm3e-good', maxRetries: 0 });
});
afterAll(() => fake.close());

describe('fake M3E embeddings server', () => {
  it('embeds a list of strings with usage', async () => {
    const res = await client.embeddings.create({
      model: 'm3e-base',
      input: ['hello world', 'bye'],
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(res.data[0]?.embedding).toEqual([11 / 256, 2 / 256, 0.125]);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('refuses a wrong key, other paths, unknown models, and fails on demand', async () => {
    const bad = new OpenAI({ baseURL: fake.url, apiKey: 'nope', maxRetries: 0 });
    expect((await bad.embeddings.create({ model: 'm3e-base', input: ['x'] }).catch((e) => e)).status).toBe(
      401,
    );
    const chat = await client.chat.completions
      .create({ model: 'm3e-base', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(chat.status).toBe(404);
    expect((await client.embeddings.create({ model: 'bge', input: ['x'] }).catch((e) => e)).status).toBe(400);
    fake.failNext(503, 'model is loading');
    const err = await client.embeddings.create({ model: 'm3e-base', input: ['x'] }).catch((e) => e);
    expect(err.status).toBe(503);
    expect(err.error).toEqual({ detail: 'model is loading' });
  });
});
