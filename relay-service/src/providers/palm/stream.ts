/**
 * PaLM 2 has no streaming: for a streamed call the relay sends the ordinary generateMessage request and turns
 * the whole reply into OpenAI chunks once it has arrived (one-api does the same): one chunk with the role and
 * the first candidate's text, a finish chunk (`stop`, or `content_filter` when the filters blocked the answer),
 * then `[DONE]`. Usage is counted locally by core from the text.
 */

import type { FrameTransformer } from '../frames.ts';
import { completionChunk, DONE_FRAME, sseFrame } from '../plain-chat.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { palmCompletionId, readPalmAnswer } from './response.ts';

export function palmStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const parts: Uint8Array[] = [];
  let text = '';
  let sawFirstToken = false;
  const transformer: FrameTransformer = {
    transform(chunk) {
      parts.push(chunk.slice());
    },
    flush(out) {
      const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let at = 0;
      for (const p of parts) {
        all.set(p, at);
        at += p.byteLength;
      }
      const answer = readPalmAnswer(all);
      const created = Math.floor(now() / 1000);
      const id = palmCompletionId(created);
      const model = input.upstreamModel;
      text = answer.texts[0] ?? '';
      sawFirstToken = text !== '';
      out.enqueue(sseFrame(completionChunk(id, created, model, { role: 'assistant', content: text })));
      out.enqueue(
        sseFrame(completionChunk(id, created, model, {}, answer.filtered ? 'content_filter' : 'stop')),
      );
      out.enqueue(DONE_FRAME);
    },
  };
  return { transformer, tally: () => ({ usage: null, completionText: text, sawFirstToken }) };
}
