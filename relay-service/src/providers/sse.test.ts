import { describe, expect, it } from 'vitest';
import { encodeSseEvent, SseDecoder, type SseEvent, sseDecoderStream } from './sse.ts';

const enc = new TextEncoder();

function decodeChunks(chunks: string[] | Uint8Array[]): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...d.push(typeof c === 'string' ? enc.encode(c) : c));
  out.push(...d.end());
  return out;
}

const ev = (data: string, event: string | null = null, id: string | null = null): SseEvent => ({
  event,
  data,
  id,
});

describe('SseDecoder', () => {
  it('dispatches on blank lines and ignores comments', () => {
    expect(decodeChunks([': ping\n\ndata: a\n\ndata: b\n\n'])).toEqual([ev('a'), ev('b')]);
  });

  it('accepts \\r\\n, \\r and \\n line ends, also mixed', () => {
    expect(decodeChunks(['data: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toEqual([ev('a'), ev('b'), ev('c')]);
  });

  it('treats a \\r\\n split across chunks as one line end', () => {
    // Were the \n read as a second (blank) line, 'x' would dispatch before its event line arrived.
    expect(decodeChunks(['data: x\r', '\nevent: e\r', '\n\r', '\n'])).toEqual([ev('x', 'e')]);
  });

  it('keeps a pending \\r across a push that decodes to no text', () => {
    // Were the \n after the empty push read as a blank line, 'a' and 'b' would be two events.
    const chunks = [enc.encode('data: a\r'), new Uint8Array(0), enc.encode('\ndata: b\r\n\r\n')];
    expect(decodeChunks(chunks)).toEqual([ev('a\nb')]);
  });

  it('joins multi-line data with \\n, strips one leading space only, reads event and id', () => {
    expect(decodeChunks(['event: t\nid: 9\ndata:  two spaces\ndata:none\n\n'])).toEqual([
      ev(' two spaces\nnone', 't', '9'),
    ]);
  });

  it('does not dispatch an event without data', () => {
    expect(decodeChunks(['event: lonely\n\nid: 3\n\ndata: z\n\n'])).toEqual([ev('z')]);
  });

  it('decodes UTF-8 split inside a code point', () => {
    const bytes = enc.encode('data: 你好👋\n\n');
    for (let i = 1; i < bytes.length; i++) {
      expect(decodeChunks([bytes.subarray(0, i), bytes.subarray(i)])).toEqual([ev('你好👋')]);
    }
  });

  it('flushes a final event that lacks its blank line', () => {
    expect(decodeChunks(['data: a\n\ndata: tail'])).toEqual([ev('a'), ev('tail')]);
    expect(decodeChunks(['data: tail\r\n'])).toEqual([ev('tail')]);
  });

  it('works as a TransformStream', async () => {
    const events: SseEvent[] = [];
    const source = new Blob(['data: 1\n', '\ndata: 2\n\n']).stream();
    const reader = source.pipeThrough(sseDecoderStream()).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) events.push(r.value);
    expect(events).toEqual([ev('1'), ev('2')]);
  });
});

describe('encodeSseEvent', () => {
  it('frames data and event lines canonically', () => {
    const dec = new TextDecoder();
    expect(dec.decode(encodeSseEvent({ data: '{"a":1}' }))).toBe('data: {"a":1}\n\n');
    expect(dec.decode(encodeSseEvent({ event: 'x', data: 'l1\nl2' }))).toBe(
      'event: x\ndata: l1\ndata: l2\n\n',
    );
  });
});
