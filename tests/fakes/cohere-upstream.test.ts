/** The Cohere fake speaks Cohere's documented v2 wire format: auth, chat (whole and SSE), tools, embed, rerank. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseDecoder } from '../../relay-service/src/providers/sse.ts';
import { type FakeCohere, PREAMBLE_TOKENS, startFakeCohere } from './cohere-upstream.ts';

let fake: FakeCohere;
// biome-ignore lint/suspicious/noExplicitAny: the fake's JSON is read field by field in assertions.
type Json = Record<string, any>;

const post = async (path: string, body: unknown, key = 'co-good') =>
  fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function events(res: Response): Promise<{ event: string | null; data: string }[]> {
  const d = new SseDecoder();
  const out = d.push(new Uint8Array(await res.arrayBuffer()));
  return [...out, ...d.end()];
}

beforeAll(async () => {
  fake = await startFakeCohere({ keys: ['co-good'] });
});
afterAll(() => fake.close());

describe('fake Cohere v2', () => {
  it('refuses a wrong key with {id, message}', async () => {
    const res = await post('/v2/chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'bad');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ id: expect.any(String), message: 'invalid api token' });
  });

  it('answers a chat with content blocks, finish reason and both usage figures', async () => {
    const res = await post('/v2/chat', {
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hi there' }],
    });
    const body = (await res.json()) as Json;
    expect(body.finish_reason).toBe('COMPLETE');
    expect(body.message.content).toEqual([{ type: 'text', text: 'Hello from command-a-03-2025' }]);
    expect(body.usage).toEqual({
      billed_units: { input_tokens: 2, output_tokens: 3 },
      tokens: { input_tokens: 2 + PREAMBLE_TOKENS, output_tokens: 3 },
    });
  });

  it('streams the documented event sequence, ending with [DONE]', async () => {
    const res = await post('/v2/chat', {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const evs = await events(res);
    expect(evs.map((e) => e.event ?? e.data)).toEqual([
      'message-start',
      'content-start',
      'content-delta',
      'content-delta',
      'content-delta',
      'content-end',
      'message-end',
      '[DONE]',
    ]);
    const end = JSON.parse(evs[6]!.data);
    expect(end).toMatchObject({ type: 'message-end', delta: { finish_reason: 'COMPLETE' } });
  });

  it('plans and calls a tool, whole and streamed', async () => {
    const req = {
      model: 'm',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
    };
    const body = (await (await post('/v2/chat', req)).json()) as Json;
    expect(body.finish_reason).toBe('TOOL_CALL');
    expect(body.message.tool_plan).toBe('I will check the weather.');
    expect(JSON.parse(body.message.tool_calls[0].function.arguments)).toEqual({ location: 'Oslo' });
    const evs = await events(await post('/v2/chat', { ...req, stream: true }));
    expect(evs.map((e) => e.event).filter((e) => e?.startsWith('tool-call'))).toEqual([
      'tool-call-start',
      'tool-call-delta',
      'tool-call-delta',
      'tool-call-end',
    ]);
  });

  it('embeds texts (input_type required) and reranks documents', async () => {
    expect((await post('/v2/embed', { model: 'embed-v4.0', texts: ['a'] })).status).toBe(400);
    const emb = (await (
      await post('/v2/embed', {
        model: 'embed-v4.0',
        texts: ['hello world', 'x'],
        input_type: 'search_document',
      })
    ).json()) as Json;
    expect(emb.embeddings.float).toHaveLength(2);
    expect(emb.meta.billed_units.input_tokens).toBe(3);
    const rr = (await (
      await post('/v2/rerank', {
        model: 'rerank-v3.5',
        query: 'capital city',
        documents: ['a city', 'the capital city', 'x'],
        top_n: 2,
      })
    ).json()) as Json;
    expect(rr.results).toEqual([
      { index: 1, relevance_score: 1 },
      { index: 0, relevance_score: 0.5 },
    ]);
    expect(rr.meta.billed_units.search_units).toBe(1);
  });

  it('lists models and obeys rules (status, usage)', async () => {
    const models = (await (
      await fetch(`${fake.url}/v1/models`, { headers: { authorization: 'Bearer co-good' } })
    ).json()) as Json;
    expect(models.models.map((m: Json) => m.name)).toContain('embed-v4.0');
    fake.on({ respond: { status: 429, message: 'too many requests' }, times: 1 });
    expect((await post('/v2/chat', { model: 'm', messages: [{ role: 'user', content: 'x' }] })).status).toBe(
      429,
    );
    expect((await post('/v2/chat', { model: 'm', messages: [{ role: 'user', content: 'x' }] })).status).toBe(
      200,
    );
  });
});
