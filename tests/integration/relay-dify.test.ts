/**
 * The official `openai` SDK through the relay to a Dify channel (type 37) in front of the fake Dify server:
 * blocking and streaming chat billed from Dify's metadata.usage, a conversation carried across calls with the
 * `conversation_id` the previous answer returned, and an upstream error in OpenAI's envelope.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDify, startFakeDify } from '../fakes/dify-upstream.ts';
import {
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeDify;
let client: OpenAI;
let userId: number;
const MODEL = 'dify-support-bot';

beforeAll(async () => {
  fake = await startFakeDify({ keys: ['app-secret'] });
  stack = await startStack({ suffix: 'relay_dify' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  await seedChannel(stack, { type: 37, key: 'app-secret', baseUrl: fake.url, models: [MODEL] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 2.5 }),
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

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

async function expectBilled(prompt: number, completion: number) {
  const log = await lastLogOf(stack, userId, MODEL);
  expect(Number(log.prompt_tokens)).toBe(prompt);
  expect(Number(log.completion_tokens)).toBe(completion);
  expect(Number(log.quota)).toBe(Math.round((prompt + completion * 3) * 2.5));
}

describe('openai SDK through the relay to Dify', () => {
  it('chat, then the conversation continued with the returned conversation_id; billed from Dify usage', async () => {
    const first = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You answer support questions.' },
        { role: 'user', content: 'My order is late' },
      ],
      user: 'customer-7',
    });
    const conversationId = (first as unknown as { conversation_id: string }).conversation_id;
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.id).toBe(conversationId);
    expect(first.choices[0]?.message.content).toBe(`Turn 1 of ${conversationId}`);
    const query = 'SYSTEM: \nYou answer support questions.\nUSER: \nMy order is late\n';
    expect(fake.requests.at(-1)?.body).toEqual({
      inputs: {},
      query,
      response_mode: 'blocking',
      user: 'customer-7',
      auto_generate_name: false,
    });
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer app-secret');
    expect(first.usage).toMatchObject({ prompt_tokens: words(query), completion_tokens: 4 });
    await expectBilled(words(query), 4);

    // Extra body fields pass through the SDK: the second turn names the conversation.
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Where is it now?' }],
      user: 'customer-7',
      // @ts-expect-error conversation_id is a Dify extension of the request body
      conversation_id: conversationId,
    });
    expect(second.choices[0]?.message.content).toBe(`Turn 2 of ${conversationId}`);
    expect(fake.requests.at(-1)?.body).toMatchObject({
      query: 'Where is it now?',
      conversation_id: conversationId,
    });
    await expectBilled(words('Where is it now?'), 4);
  });

  it('stream: answer pieces, the finish and the usage chunk; billed from message_end usage', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream me an answer' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/^Turn 1 of [0-9a-f-]{36}$/);
    expect(finish).toBe('stop');
    const prompt = words('USER: \nStream me an answer\n');
    expect(usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: 4 });
    expect(fake.requests.at(-1)?.body?.response_mode).toBe('streaming');
    await expectBilled(prompt, 4);
  });

  it("an unknown conversation: Dify's 404 reaches the client in OpenAI's envelope", async () => {
    const err = await client.chat.completions
      .create({
        model: MODEL,
        messages: [{ role: 'user', content: 'hello?' }],
        // @ts-expect-error conversation_id is a Dify extension of the request body
        conversation_id: 'no-such-conversation',
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(404);
    expect(api.message).toContain('Conversation Not Exists.');
  });
});
