/**
 * The official `openai` SDK through the relay to an AI Proxy Library channel (type 21, library id in `other`) in
 * front of the fake aiproxy.io: the answer with its cited documents as Markdown links, streamed and not, billed
 * from locally counted tokens (aiproxy reports none); a failure inside a 200 reaches the client as an error.
 */
import { countPromptTokens, countTextTokens } from '@switchyard/relay/core/tokenize.ts';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAIProxy, startFakeAIProxy } from '../fakes/aiproxy-upstream.ts';
import {
  lastLogOf,
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeAIProxy;
let client: OpenAI;
let userId: number;
let channelId: number;
const MODEL = 'gpt-3.5-turbo';
const REFS =
  '\n\n参考文档：\n1. [Overview](https://docs.example.com/overview)\n2. [Channels](https://docs.example.com/channels)\n';

beforeAll(async () => {
  fake = await startFakeAIProxy({ keys: ['ap-key'], libraries: ['lib-docs'], totalPoints: 37.25 });
  stack = await startStack({ suffix: 'relay_aiproxy' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  channelId = await seedChannel(stack, {
    type: 21,
    key: 'ap-key',
    other: 'lib-docs',
    baseUrl: fake.url,
    models: [MODEL],
  }).then((c) => c.id);
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 0.75 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 3 }),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

const messages = [
  { role: 'system' as const, content: 'Answer from the documentation.' },
  { role: 'user' as const, content: 'How do channels work?' },
];

async function expectBilled(completionText: string) {
  const prompt = await countPromptTokens('chat', { model: MODEL, messages }, MODEL);
  const completion = await countTextTokens(completionText, MODEL);
  const log = await lastLogOf(stack, userId, MODEL);
  expect(Number(log.prompt_tokens)).toBe(prompt);
  expect(Number(log.completion_tokens)).toBe(completion);
  expect(Number(log.quota)).toBe(Math.round((prompt + completion * 3) * 0.75));
}

describe('openai SDK through the relay to AI Proxy Library', () => {
  it('chat: the last message asked of the library, documents appended, billed', async () => {
    const res = await client.chat.completions.create({ model: MODEL, messages });
    const answer = `Answer from lib-docs: How do channels work?${REFS}`;
    expect(res.choices[0]?.message.content).toBe(answer);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/api/library/ask');
    expect(sent.headers.authorization).toBe('Bearer ap-key');
    expect(sent.body).toEqual({
      model: MODEL,
      query: 'How do channels work?',
      libraryId: 'lib-docs',
      stream: false,
    });
    await expectBilled(answer);
  });

  it('stream: word chunks, the documents with the finish, billed on the whole text', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
    let text = '';
    const finishes: string[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    const answer = `Answer from lib-docs: How do channels work?${REFS}`;
    expect(text).toBe(answer);
    expect(finishes).toEqual(['stop']);
    expect(fake.requests.at(-1)?.body?.stream).toBe(true);
    await expectBilled(answer);
  });

  it("a failure inside a 200 reaches the client as an error in OpenAI's envelope, nothing billed", async () => {
    const consumed = async () =>
      (
        await stack.sql<{ n: number }>(
          'select count(*)::int as n from logs where user_id = ? and model_name = ? and type = 2',
          [userId, MODEL],
        )
      )[0]!.n;
    await lastLogOf(stack, userId, MODEL);
    const before = await consumed();
    fake.on({ respond: { failure: { errCode: 5001, message: 'library is being indexed' } } });
    try {
      const err = await client.chat.completions.create({ model: MODEL, messages }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      const api = err as InstanceType<typeof OpenAI.APIError>;
      expect(api.status).toBe(500);
      expect(api.message).toContain('library is being indexed');
    } finally {
      fake.reset();
    }
    await lastLogOf(stack, userId, MODEL);
    expect(await consumed()).toBe(before);
  });

  it("the channel balance comes from aiproxy's user overview (Api-Key header) and is stored", async () => {
    const result = await stack.relays[0]!.pipeline!.channels.updateBalance(channelId);
    expect(result).toMatchObject({ channelId, success: true, balance: 37.25 });
    const sent = fake.requests.at(-1)!;
    expect(sent.method).toBe('GET');
    expect(sent.path).toBe('/api/report/getUserOverview');
    expect(sent.headers['api-key']).toBe('ap-key');
    const [row] = await stack.sql<{ balance: number }>('select balance from channels where id = ?', [
      channelId,
    ]);
    expect(Number(row!.balance)).toBe(37.25);
  });

  it('a channel without a library id is refused as a configuration error naming it, not as an unreachable upstream', async () => {
    await seedChannel(stack, { type: 21, key: 'ap-key', baseUrl: fake.url, models: ['no-library-model'] });
    await setOptions(stack, { ModelRatio: JSON.stringify({ [MODEL]: 0.75, 'no-library-model': 1 }) });
    await reload(stack);
    const sentBefore = fake.requests.length;
    const err = await client.chat.completions
      .create({ model: 'no-library-model', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(500);
    expect(api.code).toBe('channel_config_invalid');
    expect(api.message).toMatch(/cannot be used as configured.*no library id/);
    expect(api.message).not.toContain('ap-key');
    expect(fake.requests.length).toBe(sentBefore);
  });
});
