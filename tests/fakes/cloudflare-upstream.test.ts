/** The Cloudflare fake speaks what the official openai SDK parses, behind Cloudflare's token and account checks. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeCloudflare, startFakeCloudflare } from './cloudflare-upstream.ts';

const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
let fake: FakeCloudflare;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeCloudflare({ accountId: ACCOUNT, tokens: ['cf-good'] });
  client = new OpenAI({
    baseURL: `${fake.url}/client/v4/accounts/${ACCOUNT}/ai/v1`,
    apiKey: 'cf-good',
    maxRetries: 0,
  });
});
afterAll(() => fake.close());

describe('fake Cloudflare Workers AI through the openai SDK', () => {
  it('answers chat, streamed chat with usage, and embeddings', async () => {
    const res = await client.chat.completions.create({
      model: '@cf/meta/llama-3.1-8b-instruct',
      messages: [{ role: 'user', content: 'hi there' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from @cf/meta/llama-3.1-8b-instruct');
    expect(res.usage?.prompt_tokens).toBe(2);

    const stream = await client.chat.completions.create({
      model: '@cf/meta/llama-3.1-8b-instruct',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let completion = 0;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) completion = c.usage.completion_tokens;
    }
    expect(text).toBe('Hello from @cf/meta/llama-3.1-8b-instruct');
    expect(completion).toBe(3);

    const emb = await client.embeddings.create({
      model: '@cf/baai/bge-large-en-v1.5',
      input: 'I love matcha',
    });
    expect(emb.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(fake.requests.at(-1)?.path).toBe(`/client/v4/accounts/${ACCOUNT}/ai/v1/embeddings`);
  });

  it("refuses a wrong token, a wrong account, and relays model errors in Cloudflare's envelope", async () => {
    const bad = await fetch(`${fake.url}/client/v4/accounts/${ACCOUNT}/ai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({
      success: false,
      errors: [{ code: 10000, message: 'Authentication error' }],
      messages: [],
      result: null,
    });
    const wrong = await fetch(`${fake.url}/client/v4/accounts/other/ai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer cf-good' },
      body: '{}',
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { errors: { code: number }[] }).errors[0]?.code).toBe(7003);

    fake.on({
      respond: { status: 400, error: { message: 'Bad input', type: 'invalid_request_error' } },
      times: 1,
    });
    const err = await client.chat.completions
      .create({ model: '@cf/x', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({
      success: false,
      errors: [{ code: 5006, message: 'AiError: Bad input' }],
    });
  });
});
