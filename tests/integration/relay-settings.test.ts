/**
 * The settings "models tab" (seed 000) changes what the relay sends to a Claude channel: options are saved the
 * way the console saves them (OptionService.set, validated and audited), the relays pick them up on reload, and
 * the fake Anthropic upstream records what arrived.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-upstream.ts';
import {
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeAnthropic;
let client: OpenAI;
let claude: Anthropic;
const SONNET = 'claude-sonnet-4-20250514';
const HAIKU = 'claude-3-5-haiku-20241022';
const THINKING = `${SONNET}-thinking`;

/** Saves options through the console's path and lets the relays reload them. */
async function save(values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) await stack.options.set(key as never, value, null);
  await reload(stack);
}

const sent = () => fake.requests.at(-1)!;

beforeAll(async () => {
  fake = await startFakeAnthropic({ keys: ['sk-ant-settings'] });
  stack = await startStack({ suffix: 'relay_settings' });
  const user = await seedUser(stack, { quota: 10_000_000 });
  const token = await seedToken(stack, user.id, { unlimited: true });
  await seedChannel(stack, {
    type: 14,
    baseUrl: fake.url,
    key: 'sk-ant-settings',
    models: [SONNET, HAIKU, THINKING],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [SONNET]: 1.5, [HAIKU]: 0.4, [THINKING]: 1.5 }),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
  claude = new Anthropic({ baseURL: stack.relays[0]!.httpUrl, apiKey: `sk-${token.key}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

beforeEach(async () => {
  fake.reset();
  // Back to the defaults of seed 000 so each test shows only its own option's effect.
  await save({
    'claude.default_max_tokens': '{"default":8192}',
    'claude.thinking_adapter_enabled': 'true',
    'claude.thinking_adapter_budget_tokens_percentage': '0.8',
    'claude.model_headers_settings': '{}',
  });
});

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('models-tab options reach the Claude upstream', () => {
  it('claude.default_max_tokens: per model, then "default", only when the client sets none', async () => {
    await chat(SONNET);
    expect(sent().body?.max_tokens).toBe(8192);
    await save({ 'claude.default_max_tokens': JSON.stringify({ default: 1500, [HAIKU]: 3000 }) });
    await chat(HAIKU);
    expect(sent().body?.max_tokens).toBe(3000);
    await chat(SONNET);
    expect(sent().body?.max_tokens).toBe(1500);
    await chat(SONNET, { max_tokens: 42 });
    expect(sent().body?.max_tokens).toBe(42);
  });

  it('claude.thinking_adapter_budget_tokens_percentage sets the thinking budget share', async () => {
    await chat(THINKING, { max_tokens: 10_000 });
    expect(sent().body?.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    await save({ 'claude.thinking_adapter_budget_tokens_percentage': '0.25' });
    const res = await chat(THINKING, { max_tokens: 10_000 });
    expect(sent().body?.model).toBe(SONNET);
    expect(sent().body?.thinking).toEqual({ type: 'enabled', budget_tokens: 2500 });
    expect(res.choices[0]?.message.content).toBe(`Hello from ${SONNET}`);
    // Out of range is refused by the option itself and the relay keeps the last good value.
    await expect(
      stack.options.set('claude.thinking_adapter_budget_tokens_percentage', '1.2'),
    ).rejects.toThrow(/at most 1/);
    await reload(stack);
    await chat(THINKING, { max_tokens: 10_000 });
    expect(sent().body?.thinking).toEqual({ type: 'enabled', budget_tokens: 2500 });
  });

  it('claude.thinking_adapter_enabled off: the -thinking name goes upstream unchanged, without thinking', async () => {
    await save({ 'claude.thinking_adapter_enabled': 'false' });
    await chat(THINKING, { max_tokens: 10_000 });
    expect(sent().body?.model).toBe(THINKING);
    expect(sent().body?.thinking).toBeUndefined();
    // The native Messages path behaves the same.
    await claude.messages.create({
      model: THINKING,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(sent().body?.model).toBe(THINKING);
    expect(sent().body?.thinking).toBeUndefined();
  });

  it('claude.model_headers_settings: extra headers per model, anthropic-beta merged with the client', async () => {
    await save({
      'claude.model_headers_settings': JSON.stringify({
        [SONNET]: { 'anthropic-beta': 'output-128k-2025-02-19', 'x-team': 'research' },
      }),
    });
    await chat(THINKING, { max_tokens: 10_000 });
    expect(sent().headers['anthropic-beta']).toBe('output-128k-2025-02-19');
    expect(sent().headers['x-team']).toBe('research');
    expect(sent().headers['x-api-key']).toBe('sk-ant-settings');
    await chat(HAIKU);
    expect(sent().headers['anthropic-beta']).toBeUndefined();
    expect(sent().headers['x-team']).toBeUndefined();
    // Native /v1/messages: the client's beta flags are kept next to the admin's.
    await claude.messages.create(
      { model: SONNET, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
    );
    expect(sent().path).toBe('/v1/messages');
    expect(sent().headers['anthropic-beta']).toBe('output-128k-2025-02-19,prompt-caching-2024-07-31');
    expect(sent().headers['x-team']).toBe('research');
  });
});
