import { describe, expect, it } from 'vitest';
import { frameRunner } from '../providers/frames.ts';
import { maskAnswerBody, maskingStage, maskText } from './sensitive-mask.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Runs SSE text chunks through the masking stage; returns the client's bytes as text. */
function run(words: string[], chunks: string[]): string {
  const r = frameRunner([maskingStage(words)]);
  let out = '';
  for (const c of chunks) for (const b of r.push(enc.encode(c))) out += dec.decode(b);
  for (const b of r.end()) out += dec.decode(b);
  return out;
}

const chatDelta = (content: string) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
const deltas = (sse: string) =>
  sse
    .split('\n\n')
    .filter((f) => f.startsWith('data: {'))
    .map((f) => JSON.parse(f.slice(6)).choices[0].delta.content as string);

describe('sensitive-word masking', () => {
  it('masks every occurrence case-insensitively, keeping the length', () => {
    expect(maskText('the Forbidden Fruit and forbidden fruit', ['forbidden fruit'])).toBe(
      'the *************** and ***************',
    );
    expect(maskText('clean', ['foo'])).toBe('clean');
    expect(maskText('foobar', ['foo', 'oba'])).toBe('*****r');
  });

  it('masks the text fields of whole answers and leaves other bodies alone', () => {
    const chat = JSON.stringify({
      id: 'foo',
      choices: [{ message: { role: 'assistant', content: 'a foo b' } }],
    });
    expect(JSON.parse(maskAnswerBody(chat, 'application/json', ['foo']))).toEqual({
      id: 'foo',
      choices: [{ message: { role: 'assistant', content: 'a *** b' } }],
    });
    const gemini = JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Foo!' }] } }] });
    expect(maskAnswerBody(gemini, 'application/json', ['foo'])).toContain('"text":"***!"');
    expect(maskAnswerBody('foo', 'audio/mpeg', ['foo'])).toBe('foo');
    // A word split across the parts of one answer.
    const parts = JSON.stringify({
      candidates: [{ content: { parts: [{ text: 'a fo' }, { text: 'o b' }] } }],
    });
    expect(
      JSON.parse(maskAnswerBody(parts, 'application/json', ['foo'])).candidates[0].content.parts,
    ).toEqual([{ text: 'a **' }, { text: '* b' }]);
  });

  it('masks a word split across deltas, keeps every frame, and flushes the held tail at the end', () => {
    const out = run(
      ['secret'],
      [chatDelta('a se'), chatDelta('c'), chatDelta('ret b'), chatDelta(' tail'), 'data: [DONE]\n\n'],
    );
    expect(deltas(out)).toEqual(['a **', '*', '*** b', ' tail']);
    expect(out.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('holds back no more than the longest word less one character', () => {
    const r = frameRunner([maskingStage(['abc'])]);
    const first = r.push(enc.encode(chatDelta('xyzw')));
    // 4 characters, window 2: the frame is released once 2 more characters follow it.
    expect(first).toHaveLength(0);
    const second = r.push(enc.encode(chatDelta('12')));
    expect(second.map((b) => dec.decode(b)).join('')).toContain('"xyzw"');
  });

  it('masks Claude and Responses events, and whole-text events at once', () => {
    const claude = (text: string) =>
      `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`;
    const out = run(
      ['bad'],
      [claude('a b'), claude('ad c'), 'event: message_stop\ndata: {"type":"message_stop"}\n\n'],
    );
    expect(out).toContain('"text":"a *"');
    expect(out).toContain('"text":"** c"');
    expect(out.indexOf('message_stop')).toBeGreaterThan(out.indexOf('** c'));

    const resp = run(
      ['bad'],
      [
        `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'so ba' })}\n\n`,
        `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'd' })}\n\n`,
        `event: response.output_text.done\ndata: ${JSON.stringify({ type: 'response.output_text.done', text: 'so bad' })}\n\n`,
      ],
    );
    expect(resp).toContain('"delta":"so **"');
    expect(resp).toContain('"delta":"*"');
    expect(resp).toContain('"text":"so ***"');
    expect(resp).not.toContain('bad');
  });
});
