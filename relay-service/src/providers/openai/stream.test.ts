import { describe, expect, it } from 'vitest';
import { usage } from '../../core/usage.ts';
import { frameRunner } from '../frames.ts';
import { fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import type { RelayInput } from '../types.ts';
import { openaiAdaptor } from './adaptor.ts';

const here = import.meta.url;
const enc = new TextEncoder();
const chatInput = (includeUsage = false): RelayInput =>
  relayInput({
    stream: true,
    body: {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    },
  });
const run = (input: RelayInput, chunks: Uint8Array[]) =>
  runStream(openaiAdaptor.streamConversion(input), chunks);

describe('OpenAI chat stream conversion', () => {
  it('withholds the forced usage-only chunk from a client that did not ask, keeping usage in the tally', async () => {
    const { text, tally } = await run(chatInput(), [fixture(here, 'chat-stream.sse')]);
    expect(text).toBe(fixtureText(here, 'chat-stream.client-no-usage.sse'));
    expect(tally).toEqual({
      usage: usage({ promptTokens: 1040, completionTokens: 9, cachedTokens: 1024 }),
      completionText: 'Bonjour — 你好 👋',
      sawFirstToken: true,
    });
  });

  it('passes the stream through byte for byte when the client asked for usage', async () => {
    const src = fixture(here, 'chat-stream.sse');
    const { bytes, tally } = await run(chatInput(true), [src]);
    expect(bytes).toEqual(src);
    expect(tally.usage?.promptTokens).toBe(1040);
  });

  it('does not count the empty role chunk as the first token', async () => {
    const src = fixture(here, 'chat-stream.sse');
    const firstEvent = src.subarray(0, fixtureText(here, 'chat-stream.sse').indexOf('\n\n') + 2);
    const conv = openaiAdaptor.streamConversion(chatInput());
    const runner = frameRunner([conv.transformer]);
    // Each upstream frame comes out as soon as it went in.
    expect(runner.push(firstEvent)).toEqual([firstEvent]);
    expect(conv.tally()).toEqual({ usage: null, completionText: '', sawFirstToken: false });
    expect(
      runner.push(enc.encode('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n')),
    ).toHaveLength(1);
    expect(conv.tally().sawFirstToken).toBe(true);
  });

  it('collects tool call arguments; a tool call delta is a first token even with empty arguments', async () => {
    const src = fixtureText(here, 'chat-stream-tools.sse');
    const first = await run(chatInput(), [enc.encode(src.slice(0, src.indexOf('\n\n') + 2))]);
    expect(first.tally.sawFirstToken).toBe(true);
    expect(first.tally.completionText).toBe('');

    const { text, tally } = await run(chatInput(), [enc.encode(src)]);
    expect(tally.completionText).toBe('{"location":"Paris, France"}');
    expect(tally.usage).toEqual(usage({ promptTokens: 68, completionTokens: 17 }));
    expect(text).not.toContain('"prompt_tokens"');
    expect(text.endsWith('"finish_reason":"tool_calls"}],"usage":null}\n\ndata: [DONE]\n\n')).toBe(true);
  });

  it('normalises CRLF, comments, id lines, multi-line data and `data:` without a space, and adds the missing [DONE]', async () => {
    const { text, tally } = await run(chatInput(), [fixture(here, 'chat-stream-quirks.sse')]);
    expect(text).toBe(fixtureText(here, 'chat-stream-quirks.client.sse'));
    expect(tally).toEqual({
      usage: usage({ promptTokens: 3, completionTokens: 2 }),
      completionText: 'AB',
      sawFirstToken: true,
    });
  });

  it('reads DeepSeek reasoning deltas and its usage on a chunk that still has choices (kept for the client)', async () => {
    const src = fixtureText(here, 'deepseek-stream.sse');
    const { text, tally } = await run(chatInput(), [enc.encode(src)]);
    // Only the keep-alive comment goes; every data event is forwarded unchanged.
    expect(text).toBe(src.replace(': keep-alive\n\n', ''));
    expect(tally).toEqual({
      usage: usage({ promptTokens: 64, completionTokens: 321, cachedTokens: 40, reasoningTokens: 298 }),
      completionText: 'Compare the tenths.9.8 is larger.',
      sawFirstToken: true,
    });
  });

  it('legacy completions: collects choices[].text', async () => {
    const input = relayInput({ endpoint: 'completions', stream: true, body: { prompt: 'x', stream: true } });
    const { text, tally } = await run(input, [fixture(here, 'completions-stream.sse')]);
    expect(tally).toEqual({
      usage: usage({ promptTokens: 5, completionTokens: 5 }),
      completionText: 'This is a test.',
      sawFirstToken: true,
    });
    expect(text).not.toContain('"usage":{');
    expect(text.match(/\[DONE\]/g)).toHaveLength(1);
  });

  it('sends [DONE] exactly once and drops anything after it', async () => {
    const src =
      'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\ndata: [DONE]\n\ndata: {"x":1}\n\n';
    const { text } = await run(chatInput(), [enc.encode(src)]);
    expect(text).toBe('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n');
  });

  it('ends an empty upstream stream with [DONE] alone', async () => {
    const { text, tally } = await run(chatInput(), []);
    expect(text).toBe('data: [DONE]\n\n');
    expect(tally).toEqual({ usage: null, completionText: '', sawFirstToken: false });
  });

  it('forwards a mid-stream error event and non-JSON data unchanged', async () => {
    const src = 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\ndata: not json\n\n';
    const { text } = await run(chatInput(), [enc.encode(src)]);
    expect(text).toBe(`${src}data: [DONE]\n\n`);
  });
});

describe('OpenAI Responses stream conversion', () => {
  const input = relayInput({ endpoint: 'responses', stream: true, body: { input: 'hi', stream: true } });

  it('passes typed events through and takes usage from response.completed', async () => {
    const src = fixture(here, 'responses-stream.sse');
    const { bytes, tally } = await run(input, [src]);
    expect(bytes).toEqual(src);
    expect(tally).toEqual({
      usage: usage({ promptTokens: 2048, completionTokens: 310, cachedTokens: 1920, reasoningTokens: 300 }),
      completionText: 'Hi there!',
      sawFirstToken: true,
    });
  });

  it('counts function-call argument deltas', async () => {
    const src =
      'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","delta":"{\\"a\\":"}\n\n' +
      'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","delta":"1}"}\n\n';
    const { tally } = await run(input, [enc.encode(src)]);
    expect(tally.completionText).toBe('{"a":1}');
    expect(tally.sawFirstToken).toBe(true);
  });
});

describe('stream conversion is independent of network chunking', () => {
  const cases: [string, RelayInput][] = [
    ['chat-stream.sse', chatInput()],
    ['chat-stream-tools.sse', chatInput()],
    ['chat-stream-quirks.sse', chatInput()],
    ['deepseek-stream.sse', chatInput(true)],
    ['responses-stream.sse', relayInput({ endpoint: 'responses', stream: true, body: { stream: true } })],
  ];

  for (const [name, input] of cases) {
    it(`${name}: every two-piece split and byte-by-byte feeding give the same bytes and tally`, async () => {
      const src = fixture(here, name);
      const whole = await run(input, [src]);
      expect(whole.bytes.length).toBeGreaterThan(0);
      for (let i = 1; i < src.length; i++) {
        const split = await run(input, splitAt(src, i));
        if (split.text !== whole.text) expect.fail(`output differs when split at byte ${i}`);
        expect(split.tally).toEqual(whole.tally);
      }
      const bytewise = await run(
        input,
        Array.from(src, (_, i) => src.subarray(i, i + 1)),
      );
      expect(bytewise.bytes).toEqual(whole.bytes);
      expect(bytewise.tally).toEqual(whole.tally);
    });
  }
});
