/**
 * The official `openai` SDK through the relay to a PaLM 2 channel (type 11) in front of the fake PaLM upstream:
 * chat and streamed chat (PaLM has no streaming: the whole answer arrives as chunks), billed from tokens counted
 * locally since PaLM reports no usage; an upstream error in OpenAI's envelope.
 */
import { countPromptTokens, countTextTokens } from '@switchyard/relay/core/tokenize.ts';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakePalm, startFakePalm } from '../fakes/palm-upstream.ts';
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
let fake: FakePalm;
let client: OpenAI;
let userId: number;
const MODEL = 'chat-bison-001';

beforeAll(async () => {
  fake = await startFakePalm({ keys: ['AIza-palm'] });
  stack = await startStack({ suffix: 'relay_palm' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  await seedChannel(stack, { type: 11, key: 'AIza-palm', baseUrl: fake.url, models: [MODEL] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 1.5 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 2 }),
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
  { role: 'system' as const, content: 'You are a terse assistant.' },
  { role: 'user' as const, content: 'Greet the PaLM integration test.' },
];

async function expectBilled(completionText: string) {
  const prompt = await countPromptTokens('chat', { model: MODEL, messages }, MODEL);
  const completion = await countTextTokens(completionText, MODEL);
  const log = await lastLogOf(stack, userId, MODEL);
  expect(Number(log.prompt_tokens)).toBe(prompt);
  expect(Number(log.completion_tokens)).toBe(completion);
  expect(Number(log.quota)).toBe(Math.round((prompt + completion * 2) * 1.5));
}

describe('openai SDK through the relay to PaLM 2', () => {
  it('chat: system → context, the answer, tokens counted locally and billed', async () => {
    const res = await client.chat.completions.create({ model: MODEL, messages, temperature: 0.2 });
    expect(res.choices[0]?.message.content).toBe(`Hello from ${MODEL}`);
    expect(res.choices[0]?.finish_reason).toBe('stop');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta2/models/${MODEL}:generateMessage`);
    expect(sent.headers['x-goog-api-key']).toBe('AIza-palm');
    expect(sent.body).toEqual({
      prompt: {
        context: 'You are a terse assistant.',
        messages: [{ author: '0', content: 'Greet the PaLM integration test.' }],
      },
      temperature: 0.2,
    });
    await expectBilled(`Hello from ${MODEL}`);
  });

  it('stream: the whole answer as one content chunk and a finish chunk, billed the same way', async () => {
    fake.on({ respond: { content: 'Greetings, integration test. All systems nominal.' }, times: 1 });
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
    const deltas: string[] = [];
    const finishes: string[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finishes.push(choice.finish_reason);
    }
    expect(deltas).toEqual(['Greetings, integration test. All systems nominal.']);
    expect(finishes).toEqual(['stop']);
    await expectBilled('Greetings, integration test. All systems nominal.');
  });

  it("an upstream error reaches the client in OpenAI's envelope with its status", async () => {
    fake.on({
      respond: {
        error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
      },
    });
    try {
      const err = await client.chat.completions.create({ model: MODEL, messages }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      const api = err as InstanceType<typeof OpenAI.APIError>;
      expect(api.status).toBe(400);
      expect(api.message).toContain('Request contains an invalid argument.');
    } finally {
      fake.reset();
    }
  });
});
