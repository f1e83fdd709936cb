/**
 * Structured output and tool-forced JSON across the bridges, both ways, with the official SDKs:
 * - `@anthropic-ai/sdk` `messages.parse` (zodOutputFormat → output_config.format) on an OpenAI channel: the schema
 *   arrives upstream as response_format json_schema; a forced tool arrives as a named tool_choice;
 * - `openai` `chat.completions.parse` (zodResponseFormat → response_format json_schema) on a Claude channel: the
 *   schema arrives as output_config.format; a named tool_choice as {type: 'tool'};
 * - `@google/genai` responseJsonSchema / responseSchema on an OpenAI channel → response_format, and OpenAI's
 *   json_schema on a Gemini channel → responseMimeType + responseSchema; forced functions both ways.
 * Every call billed from the upstream's usage.
 */
import Anthropic from '@anthropic-ai/sdk';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { type FakeGemini, startFakeGemini } from '../fakes/gemini-upstream.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

type Obj = Record<string, unknown>;

let stack: Stack;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;
let oa: OpenAI;
let claude: Anthropic;
let ai: GoogleGenAI;
let userId: number;

const CLAUDE = 'claude-sonnet-4-20250514';
const GEMINI = 'gemini-2.5-flash';
const GPT = 'gpt-4o';

const Reply = z.object({ message: z.string() });

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ keys: ['sk-ant-channel'] });
  gemini = await startFakeGemini({ keys: ['AIza-good'] });
  openai = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_structured' });
  userId = (await seedUser(stack, { quota: 50_000_000 })).id;
  const token = (await seedToken(stack, userId, { unlimited: true })).key;
  await seedChannel(stack, { type: 14, baseUrl: anthropic.url, key: 'sk-ant-channel', models: [CLAUDE] });
  await seedChannel(stack, { type: 24, baseUrl: gemini.url, key: 'AIza-good', models: [GEMINI] });
  await seedChannel(stack, { type: 1, baseUrl: openai.url, key: 'sk-openai', models: [GPT] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [CLAUDE]: 1.5, [GEMINI]: 0.5, [GPT]: 1.25 }),
    CompletionRatio: JSON.stringify({ [CLAUDE]: 5, [GEMINI]: 4, [GPT]: 4 }),
  });
  const url = stack.relays[0]!.httpUrl;
  oa = new OpenAI({ baseURL: `${url}/v1`, apiKey: `sk-${token}`, maxRetries: 0 });
  claude = new Anthropic({ baseURL: url, apiKey: `sk-${token}`, maxRetries: 0 });
  ai = new GoogleGenAI({ apiKey: `sk-${token}`, apiVersion: 'v1beta', httpOptions: { baseUrl: url } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await anthropic?.close();
  await gemini?.close();
  await openai?.close();
});

beforeEach(async () => {
  anthropic.reset();
  gemini.reset();
  openai.reset();
  await drained(stack);
});

async function expectBilled(model: string, p: number, c: number, quota: number) {
  const log = await lastLogOf(stack, userId, model);
  expect(Number(log.prompt_tokens)).toBe(p);
  expect(Number(log.completion_tokens)).toBe(c);
  expect(Number(log.quota)).toBe(quota);
}

const lastOpenAIBody = () => openai.requests.at(-1)!.body as Obj;
const lastClaudeBody = () => anthropic.requests.at(-1)!.body as Obj;
const lastGeminiBody = () => gemini.requests.at(-1)!.body as Obj;

describe('Claude clients on an OpenAI channel', () => {
  it('messages.parse: output_config.format arrives as response_format json_schema, parsed_output works', async () => {
    openai.on({ model: GPT, respond: { usage: { prompt_tokens: 30, completion_tokens: 6 } }, times: 1 });
    const msg = await claude.messages.parse({
      model: GPT,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Reply with a message' }],
      output_config: { format: zodOutputFormat(Reply) },
    });
    expect(msg.parsed_output).toEqual({ message: `Hello from ${GPT}` });
    const rf = lastOpenAIBody().response_format as { type: string; json_schema: { schema: Obj } };
    expect(rf.type).toBe('json_schema');
    expect(rf.json_schema.schema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    // (30 + 6·4)·1.25
    await expectBilled(GPT, 30, 6, 68);
  });

  it('a forced tool (tool-forced JSON) arrives as a named tool_choice and comes back as tool_use', async () => {
    const msg = await claude.messages.create({
      model: GPT,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      tools: [
        {
          name: 'get_weather',
          input_schema: {
            type: 'object',
            properties: { location: { type: 'string' } },
            required: ['location'],
          },
        },
      ],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    expect(lastOpenAIBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    const use = msg.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { location: 'Oslo' } });
    expect(msg.stop_reason).toBe('tool_use');
  });
});

describe('OpenAI clients on a Claude channel', () => {
  it('chat.completions.parse: response_format json_schema arrives as output_config.format', async () => {
    anthropic.on({ respond: { usage: { input_tokens: 20, output_tokens: 4 } }, times: 1 });
    const res = await oa.chat.completions.parse({
      model: CLAUDE,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Reply with a message' },
      ],
      response_format: zodResponseFormat(Reply, 'reply'),
    });
    expect(res.choices[0]!.message.parsed).toEqual({ message: `Hello from ${CLAUDE}` });
    const body = lastClaudeBody();
    const format = (body.output_config as { format: { type: string; schema: Obj } }).format;
    expect(format.type).toBe('json_schema');
    expect(format.schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    // The schema is enforced upstream, not appended to the system prompt.
    expect(body.system).toBe('Be brief.');
    // (20 + 4·5)·1.5
    await expectBilled(CLAUDE, 20, 4, 60);
  });

  it('a named tool_choice arrives as {type: tool} and comes back as the forced call', async () => {
    const res = await oa.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(lastClaudeBody().tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    const call = res.choices[0]!.message.tool_calls?.[0];
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ location: 'Oslo' });
  });
});

describe('Gemini clients on an OpenAI channel, OpenAI clients on a Gemini channel', () => {
  it('responseJsonSchema / responseSchema arrive as response_format json_schema', async () => {
    const schema = {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    };
    const res = await ai.models.generateContent({
      model: GPT,
      contents: 'Reply with a message',
      config: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    expect(JSON.parse(res.text ?? '')).toEqual({ message: `Hello from ${GPT}` });
    expect(lastOpenAIBody().response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema },
    });
    await ai.models.generateContent({
      model: GPT,
      contents: 'Reply with a message',
      config: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: Type.OBJECT,
          properties: { message: { type: Type.STRING } },
          required: ['message'],
        },
      },
    });
    expect(lastOpenAIBody().response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema },
    });
  });

  it('OpenAI json_schema on a Gemini channel arrives as responseMimeType + responseSchema, billed', async () => {
    gemini.on({ respond: { usage: { promptTokenCount: 12, candidatesTokenCount: 3 } }, times: 1 });
    const res = await oa.chat.completions.parse({
      model: GEMINI,
      messages: [{ role: 'user', content: 'Reply with a message' }],
      response_format: zodResponseFormat(Reply, 'reply'),
    });
    expect(res.choices[0]!.message.parsed).toEqual({ message: `Hello from ${GEMINI}` });
    const gen = lastGeminiBody().generationConfig as Obj;
    expect(gen.responseMimeType).toBe('application/json');
    expect(gen.responseSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    // (12 + 3·4)·0.5
    await expectBilled(GEMINI, 12, 3, 12);
  });

  it('forced functions: ANY with one allowed name ⇄ a named tool_choice', async () => {
    const decl = {
      name: 'get_weather',
      parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } } },
    };
    const res = await ai.models.generateContent({
      model: GPT,
      contents: 'What is the weather in Oslo?',
      config: {
        tools: [{ functionDeclarations: [decl] }],
        toolConfig: {
          functionCallingConfig: {
            mode: FunctionCallingConfigMode.ANY,
            allowedFunctionNames: ['get_weather'],
          },
        },
      },
    });
    expect(lastOpenAIBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(res.functionCalls?.[0]).toMatchObject({ name: 'get_weather', args: { location: 'Oslo' } });

    await oa.chat.completions.create({
      model: GEMINI,
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(lastGeminiBody().toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
  });
});
