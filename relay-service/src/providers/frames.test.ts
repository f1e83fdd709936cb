import { describe, expect, it } from 'vitest';
import { type FrameTransformer, frameRunner } from './frames.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const text = (chunks: Uint8Array[]) => chunks.map((c) => dec.decode(c));

/** Emits one line per complete '\n'-terminated line it has seen; the tail on flush, then `tag` once. */
function lines(tag: string): FrameTransformer {
  let held = '';
  return {
    transform(chunk, out) {
      held += dec.decode(chunk);
      let at = held.indexOf('\n');
      while (at >= 0) {
        out.enqueue(enc.encode(`${held.slice(0, at)}\n`));
        held = held.slice(at + 1);
        at = held.indexOf('\n');
      }
    },
    flush(out) {
      if (held) out.enqueue(enc.encode(`${held}\n`));
      out.enqueue(enc.encode(`${tag}\n`));
    },
  };
}

const upper: FrameTransformer = {
  transform(chunk, out) {
    out.enqueue(enc.encode(dec.decode(chunk).toUpperCase()));
  },
};

describe('frameRunner', () => {
  it('returns what one chunk produced at once, and nothing for a chunk that completes no frame', () => {
    const r = frameRunner([lines('end')]);
    expect(text(r.push(enc.encode('a\nb')))).toEqual(['a\n']);
    expect(r.push(enc.encode('c'))).toEqual([]);
    expect(text(r.push(enc.encode('\n')))).toEqual(['bc\n']);
    expect(text(r.end())).toEqual(['end\n']);
  });

  it('feeds each stage into the next, and flushes in order so a tail passes the later stages', () => {
    const r = frameRunner([lines('first done'), upper, lines('second done')]);
    expect(text(r.push(enc.encode('x\ny')))).toEqual(['X\n']);
    // Stage 1 flushes "y" and its tag through the upper-casing into stage 3, which then adds its own tag.
    expect(text(r.end())).toEqual(['Y\n', 'FIRST DONE\n', 'second done\n']);
  });

  it('passes chunks through with no stages', () => {
    const r = frameRunner([]);
    expect(text(r.push(enc.encode('raw')))).toEqual(['raw']);
    expect(r.end()).toEqual([]);
  });
});
