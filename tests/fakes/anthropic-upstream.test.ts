/** The fake speaks what the official Anthropic SDK parses: messages, streams, tools, thinking, errors. */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from './anthropic-upstream.ts';

let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic({ keys: ['sk-ant-good'] });
  client = new Anthropic({ baseURL: fake.url, apiKey: 'sk-ant-good', maxRetries: 0 });
});
afterAll(() => fake.close());

describe('fake Anthropic upstream through the official SDK', () => {
  it('answers a message with usage including cache fields', async () => {
    fake.on({
      respond: { usage: { input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 3 } },
      times: 1,
    });
    const msg = await client.messages.create({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from claude-sonnet-4-20250514' }]);
    expect(msg.usage.cache_read_input_tokens).toBe(100);
    expect(fake.requests.at(-1)?.headers['anthropic-version']).toBeTruthy();
  });

  it('answers structured output (output_config.format) as JSON and refuses a malformed format', async () => {
    const schema = {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
      additionalProperties: false,
    } as const;
    const msg = await client.messages.parse({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      output_config: { format: { type: 'json_schema', schema } },
    });
    expect(msg.content[0]?.type === 'text' && msg.content[0].text).toBe(
      '{"message":"Hello from claude-sonnet-4-20250514"}',
    );
    await expect(
      client.messages.create({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        output_config: { format: { type: 'text' } as never },
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('streams text deltas the SDK assembles into the final message', async () => {
    const stream = client.messages.stream({
      model: 'claude-3-5-haiku-20241022',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('Hello from claude-3-5-haiku-20241022');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(3);
  });

  it('calls a tool, streamed too, and emits thinking first when enabled', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'w',
        input_schema: { type: 'object', properties: { location: { type: 'string' } } },
      },
    ];
    const msg = await client.messages.create({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools,
      messages: [{ role: 'user', content: 'weather in Tokyo?' }],
    });
    expect(msg.content[0]?.type).toBe('thinking');
    const use = msg.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ location: 'Tokyo' });
    const streamed = await client.messages
      .stream({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 100,
        tools,
        messages: [{ role: 'user', content: 'weather in Oslo' }],
      })
      .finalMessage();
    const su = streamed.content.find((b) => b.type === 'tool_use');
    expect(su?.type === 'tool_use' && su.input).toEqual({ location: 'Oslo' });
  });

  it('rejects a bad key and surfaces upstream errors as the SDK typed errors', async () => {
    const bad = new Anthropic({ baseURL: fake.url, apiKey: 'nope', maxRetries: 0 });
    await expect(
      bad.messages.create({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    fake.on({
      respond: { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } },
      times: 1,
    });
    await expect(
      client.messages.create({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 529 });
  });

  it('lists models', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toContain('claude-sonnet-4-20250514');
  });
});
