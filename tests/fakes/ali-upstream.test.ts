/** The fake speaks DashScope's documented wire format: auth, message and text formats, SSE, embeddings, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHAT_PATH,
  EMBEDDINGS_PATH,
  FAKE_ALI_IMAGE_TOKENS,
  type FakeAli,
  MULTIMODAL_PATH,
  startFakeAli,
} from './ali-upstream.ts';

let fake: FakeAli;
beforeAll(async () => {
  fake = await startFakeAli({ keys: ['sk-good'] });
});
afterAll(() => fake.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(fake.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-good', ...headers },
    body: JSON.stringify(body),
  });

const chat = (parameters: Record<string, unknown> = {}) => ({
  model: 'qwen-plus',
  input: { messages: [{ role: 'user', content: 'hi there' }] },
  parameters,
});

describe('fake DashScope upstream', () => {
  it('refuses a wrong key as DashScope does', async () => {
    const res = await post(CHAT_PATH, chat(), { authorization: 'Bearer sk-bad' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'InvalidApiKey', message: 'Invalid API-key provided.' });
  });

  it('refuses a body without messages or with part-list content', async () => {
    const res = await post(CHAT_PATH, { model: 'qwen-plus', input: {} });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('InvalidParameter');
    const parts = await post(CHAT_PATH, {
      model: 'qwen-plus',
      input: { messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] },
    });
    expect(parts.status).toBe(400);
  });

  it('answers the message format and the legacy text format', async () => {
    const msg = await (await post(CHAT_PATH, chat({ result_format: 'message' }))).json();
    expect(msg.output.choices[0]).toEqual({
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'Hello from qwen-plus' },
    });
    expect(msg.usage).toEqual({ input_tokens: 2, output_tokens: 3, total_tokens: 5 });
    const legacy = await (await post(CHAT_PATH, chat())).json();
    expect(legacy.output).toEqual({ text: 'Hello from qwen-plus', finish_reason: 'stop' });
  });

  it('streams SSE events, incremental or cumulative', async () => {
    const inc = await (
      await post(CHAT_PATH, chat({ result_format: 'message', incremental_output: true }), {
        'X-DashScope-SSE': 'enable',
      })
    ).text();
    const events = inc.trim().split('\n\n');
    expect(events).toHaveLength(3);
    expect(events[0]).toMatch(/^id:1\nevent:result\n:HTTP_STATUS\/200\ndata:\{/);
    const data = events.map((e) => JSON.parse(e.split('data:')[1]!));
    expect(data.map((d) => d.output.choices[0].message.content)).toEqual(['Hello', ' from', ' qwen-plus']);
    expect(data.map((d) => d.output.choices[0].finish_reason)).toEqual(['null', 'null', 'stop']);
    expect(data[2].usage).toEqual({ input_tokens: 2, output_tokens: 3, total_tokens: 5 });
    const cum = await (
      await post(CHAT_PATH, chat({ result_format: 'message' }), { 'X-DashScope-SSE': 'enable' })
    ).text();
    const last = JSON.parse(cum.trim().split('\n\n').at(-1)!.split('data:')[1]!);
    expect(last.output.choices[0].message.content).toBe('Hello from qwen-plus');
  });

  it('calls the first tool for a weather question', async () => {
    const res = await (
      await post(CHAT_PATH, {
        model: 'qwen-plus',
        input: { messages: [{ role: 'user', content: 'weather in Hangzhou?' }] },
        parameters: { result_format: 'message', tools: [{ type: 'function', function: { name: 'w' } }] },
      })
    ).json();
    expect(res.output.choices[0].finish_reason).toBe('tool_calls');
    expect(res.output.choices[0].message.tool_calls[0].function).toEqual({
      name: 'w',
      arguments: '{"location":"Hangzhou"}',
    });
  });

  it('multimodal service: item-list content in and out, image tokens counted', async () => {
    const res = await (
      await post(MULTIMODAL_PATH, {
        model: 'qwen-vl-plus',
        input: {
          messages: [{ role: 'user', content: [{ image: 'https://x/a.jpg' }, { text: 'what is it' }] }],
        },
        parameters: { result_format: 'message' },
      })
    ).json();
    expect(res.output.choices[0].message.content).toEqual([{ text: 'Hello from qwen-vl-plus' }]);
    expect(res.usage).toEqual({
      input_tokens: 3 + FAKE_ALI_IMAGE_TOKENS,
      output_tokens: 3,
      total_tokens: 6 + FAKE_ALI_IMAGE_TOKENS,
      image_tokens: FAKE_ALI_IMAGE_TOKENS,
    });
    const text = await post(MULTIMODAL_PATH, chat());
    expect(text.status).toBe(400);
  });

  it('answers embeddings with text_index and total_tokens', async () => {
    const res = await (
      await post(EMBEDDINGS_PATH, {
        model: 'text-embedding-v3',
        input: { texts: ['a b', 'c'] },
        parameters: { text_type: 'query', dimension: 2 },
      })
    ).json();
    expect(res.output.embeddings.map((e: { text_index: number }) => e.text_index)).toEqual([0, 1]);
    expect(res.output.embeddings[0].embedding).toHaveLength(2);
    expect(res.usage).toEqual({ total_tokens: 3 });
  });

  it('follows rules: error status, stream error event', async () => {
    fake.on({
      respond: { status: 429, error: { code: 'Throttling.RateQuota', message: 'slow down' } },
      times: 1,
    });
    const res = await post(CHAT_PATH, chat());
    expect(res.status).toBe(429);
    expect((await res.json()).code).toBe('Throttling.RateQuota');
    fake.on({ respond: { streamErrorAfter: 1 }, times: 1 });
    const text = await (
      await post(CHAT_PATH, chat({ result_format: 'message', incremental_output: true }), {
        'X-DashScope-SSE': 'enable',
      })
    ).text();
    expect(text).toContain('event:error\n:HTTP_STATUS/500');
  });
});
