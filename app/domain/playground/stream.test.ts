import { describe, expect, it } from 'vitest';
import { boundHistory, clampTemperature, defaultModel, requestMessages } from './constants.ts';
import { errorMessageOf, parseData, readEventStream, type StreamEvent, takeEvents } from './stream.ts';

function body(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(encoder.encode(p));
      controller.close();
    },
  });
}

async function read(parts: string[]) {
  const events: StreamEvent[] = [];
  const end = await readEventStream(body(parts), (e) => events.push(e));
  return { end, events };
}

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

describe('the playground stream reader', () => {
  it('reads deltas split anywhere across reads, and ends on [DONE]', async () => {
    const text = `${chunk('Hel')}${chunk('lo')}data: [DONE]\n\n${chunk('after')}`;
    const { end, events } = await read([text.slice(0, 7), text.slice(7, 40), text.slice(40)]);
    expect(end).toBe('done');
    expect(events).toEqual([{ kind: 'delta', text: 'Hel' }, { kind: 'delta', text: 'lo' }, { kind: 'done' }]);
  });

  it('an error event ends the stream as error; a close without [DONE] is "closed"', async () => {
    const failed = await read([
      chunk('part'),
      `data: {"error":{"message":"upstream died","type":"server_error"}}\n\n`,
    ]);
    expect(failed).toEqual({
      end: 'error',
      events: [
        { kind: 'delta', text: 'part' },
        { kind: 'error', message: 'upstream died' },
      ],
    });
    // the last event without its blank line still counts; CRLF framing too
    const closed = await read([
      chunk('a').replace(/\n/g, '\r\n'),
      'data: {"choices":[{"delta":{"content":"b"}}]}',
    ]);
    expect(closed).toEqual({
      end: 'closed',
      events: [
        { kind: 'delta', text: 'a' },
        { kind: 'delta', text: 'b' },
      ],
    });
  });

  it('skips role, usage and unparsable events', () => {
    expect(parseData('{"choices":[{"delta":{"role":"assistant","content":""}}]}')).toBeNull();
    expect(parseData('{"choices":[],"usage":{"total_tokens":3}}')).toBeNull();
    expect(parseData('nonsense')).toBeNull();
    expect(takeEvents(': comment\n\ndata: x\n\ndata: y')).toEqual({ data: ['x'], rest: 'data: y' });
  });

  it('reads the message of an OpenAI error or a console envelope', () => {
    expect(errorMessageOf({ error: { message: 'no channel', type: 'x' } })).toBe('no channel');
    expect(errorMessageOf({ success: false, message: 'refused' })).toBe('refused');
    expect(errorMessageOf({ choices: [] })).toBeNull();
    expect(errorMessageOf(null)).toBeNull();
  });
});

describe('playground constants', () => {
  it('clamps the temperature to 0.1..1 in steps of 0.1', () => {
    expect(clampTemperature(0)).toBe(0.1);
    expect(clampTemperature(0.34)).toBe(0.3);
    expect(clampTemperature(5)).toBe(1);
    expect(clampTemperature(Number.NaN)).toBe(0.7);
  });

  it('defaults to gpt-4o-mini when served, else the first model', () => {
    expect(defaultModel(['a', 'gpt-4o-mini'])).toBe('gpt-4o-mini');
    expect(defaultModel(['b', 'a'])).toBe('b');
    expect(defaultModel([])).toBe('');
  });

  it('builds the request from the system prompt, completed turns and the question', () => {
    expect(
      requestMessages(
        '',
        [
          { role: 'user', content: 'q1' },
          { role: 'assistant', content: 'a1', status: 'complete' },
          { role: 'user', content: 'q2' },
          { role: 'assistant', content: 'partial', status: 'incomplete' },
        ],
        'q3',
      ),
    ).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
      { role: 'user', content: 'q3' },
    ]);
  });

  it('bounds the history by characters from the oldest, keeping the newest turn whatever its size', () => {
    const big = 'x'.repeat(20_000);
    const list = [
      { role: 'user' as const, content: big },
      { role: 'assistant' as const, content: big, status: 'complete' as const },
      { role: 'user' as const, content: 'q' },
      { role: 'assistant' as const, content: big, status: 'complete' as const },
    ];
    expect(boundHistory(list).map((m) => m.content.length)).toEqual([1, 20_000]);
    expect(boundHistory([{ role: 'user', content: big.repeat(3) }, ...list.slice(1, 2)])).toHaveLength(2);
  });
});
