/**
 * Issue 18's "done when" for the OpenAI-compatible channel types of the catalogue (providers/openai/channels.ts):
 * a channel of each type answers the official `openai` SDK through the relay, streamed and not, and each call is
 * billed exactly from the usage the upstream reported. Each vendor's upstream is the fake OpenAI behind a small
 * front that serves the vendor's documented path (Zhipu v4 `/api/paas/v4`, VolcEngine Ark `/api/v3`, Qianfan
 * `/v2`, MiniMax `/v1/text/chatcompletion_v2`, ...), so the test also shows each type's request reaching its path.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

/** Type → the chat path its vendor documents (below the channel's base URL), and its name for the report. */
const CHAT_TYPES: { type: number; name: string; path: string }[] = [
  { type: 4, name: 'Ollama', path: '/v1/chat/completions' },
  { type: 19, name: '360', path: '/v1/chat/completions' },
  { type: 22, name: 'FastGPT', path: '/v1/chat/completions' },
  { type: 25, name: 'Moonshot', path: '/v1/chat/completions' },
  { type: 26, name: 'Zhipu v4', path: '/api/paas/v4/chat/completions' },
  { type: 31, name: 'Yi', path: '/v1/chat/completions' },
  { type: 35, name: 'MiniMax', path: '/v1/text/chatcompletion_v2' },
  { type: 40, name: 'SiliconFlow', path: '/v1/chat/completions' },
  { type: 42, name: 'Mistral', path: '/v1/chat/completions' },
  { type: 43, name: 'DeepSeek', path: '/v1/chat/completions' },
  { type: 45, name: 'VolcEngine', path: '/api/v3/chat/completions' },
  { type: 46, name: 'Baidu v2 (Qianfan)', path: '/v2/chat/completions' },
];
const RATIO = 0.5;
const COMPLETION_RATIO = 3;

let stack: Stack;
let fake: FakeOpenAI;
let front: Server;
/** What the vendor front received: path and bearer key, in order. */
const seen: { path: string; auth: string }[] = [];
let client: OpenAI;
let userId: number;

/** The vendor's path onto the fake's `/v1/...`; anything else is a 404 as a vendor would answer. */
function toFakePath(path: string): string | null {
  if (/\/(chat\/completions|text\/chatcompletion_v2)$/.test(path)) return '/v1/chat/completions';
  if (path.endsWith('/embeddings')) return '/v1/embeddings';
  if (path.endsWith('/rerank')) return '/v1/rerank';
  return null;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  front = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      seen.push({ path, auth: String(req.headers.authorization ?? '') });
      const target = toFakePath(path);
      if (!target) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const upstream = await fetch(fake.url + target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-key' },
        body: Buffer.concat(chunks),
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
      const reader = upstream.body?.getReader();
      for (;;) {
        const next = await reader?.read();
        if (!next || next.done) break;
        res.write(next.value);
      }
      res.end();
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  stack = await startStack({ suffix: 'relay_compat_types' });
  userId = (await seedUser(stack, { quota: 50_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  for (const t of CHAT_TYPES)
    await seedChannel(stack, {
      type: t.type,
      baseUrl: frontUrl,
      key: `key-${t.type}`,
      models: [`m-${t.type}`],
    });
  await seedChannel(stack, { type: 38, baseUrl: frontUrl, key: 'key-38', models: ['jina-embeddings-v3'] });
  const models = [...CHAT_TYPES.map((t) => `m-${t.type}`), 'jina-embeddings-v3'];
  await setOptions(stack, {
    ModelRatio: JSON.stringify(Object.fromEntries(models.map((m) => [m, RATIO]))),
    CompletionRatio: JSON.stringify(Object.fromEntries(models.map((m) => [m, COMPLETION_RATIO]))),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
}, 60_000);

afterAll(async () => {
  front?.closeAllConnections();
  front?.close();
  await stack?.close();
  await fake?.close();
});

describe.each(CHAT_TYPES)('type $type ($name) through the openai SDK', ({ type, path }) => {
  const model = `m-${type}`;

  it('chat, not streamed: answered from its path with its key, billed exactly', async () => {
    fake.on({ model, respond: { usage: { prompt_tokens: 120, completion_tokens: 30 } }, times: 1 });
    seen.length = 0;
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]?.message.content).toBe(`Hello from ${model}`);
    expect(seen).toEqual([{ path, auth: `Bearer key-${type}` }]);
    const log = await lastLogOf(stack, userId, model);
    expect([Number(log.prompt_tokens), Number(log.completion_tokens)]).toEqual([120, 30]);
    expect(Number(log.quota)).toBe((120 + 30 * COMPLETION_RATIO) * RATIO);
    expect(log.is_stream).toBe(false);
  });

  it('chat, streamed: every chunk and the usage come through, billed exactly', async () => {
    fake.on({ model, respond: { usage: { prompt_tokens: 80, completion_tokens: 3 } }, times: 1 });
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(`Hello from ${model}`);
    expect(usage).toMatchObject({ prompt_tokens: 80, completion_tokens: 3 });
    const log = await lastLogOf(stack, userId, model);
    expect([Number(log.prompt_tokens), Number(log.completion_tokens)]).toEqual([80, 3]);
    expect(Number(log.quota)).toBe(Math.round((80 + 3 * COMPLETION_RATIO) * RATIO));
    expect(log.is_stream).toBe(true);
  });
});

describe('type 38 (Jina) through the openai SDK', () => {
  it('embeddings: answered from /v1/embeddings with its key, billed exactly', async () => {
    seen.length = 0;
    const res = await client.embeddings.create({ model: 'jina-embeddings-v3', input: ['one', 'two'] });
    expect(res.data).toHaveLength(2);
    expect(seen).toEqual([{ path: '/v1/embeddings', auth: 'Bearer key-38' }]);
    const log = await lastLogOf(stack, userId, 'jina-embeddings-v3');
    expect(Number(log.prompt_tokens)).toBe(res.usage.prompt_tokens);
    expect(Number(log.quota)).toBe(Math.round(res.usage.prompt_tokens * RATIO));
  });
});
