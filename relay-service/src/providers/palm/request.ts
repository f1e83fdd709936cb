/**
 * OpenAI chat → PaLM 2 `generateMessage` (https://ai.google.dev/api/palm, v1beta2): system messages become the
 * prompt's `context`, the other messages `prompt.messages` with author "0" for the user and "1" for the model
 * (the convention of Google's examples and one-api). temperature / n / top_p / top_k map to temperature /
 * candidateCount / topP / topK; PaLM chat has no output-token limit, so max_tokens is not sent.
 */

import type { Obj } from '../json.ts';
import { chatTexts } from '../plain-chat.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

export const PALM_DEFAULT_BASE = 'https://generativelanguage.googleapis.com';

export function palmUrl(channel: ChannelConfig, model: string): string {
  const base = channel.baseUrl || PALM_DEFAULT_BASE;
  return `${base}/v1beta2/models/${encodeURIComponent(model)}:generateMessage`;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function buildPalmBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const context: string[] = [];
  const messages: { author: string; content: string }[] = [];
  for (const m of chatTexts(input)) {
    if (m.role === 'system' || m.role === 'developer') context.push(m.text);
    else messages.push({ author: m.role === 'user' ? '0' : '1', content: m.text });
  }
  const prompt: Obj = { messages };
  if (context.length) prompt.context = context.join('\n');
  const out: Obj = { prompt };
  if (finite(body.temperature)) out.temperature = body.temperature;
  if (finite(body.n) && body.n > 1) out.candidateCount = Math.trunc(body.n);
  if (finite(body.top_p)) out.topP = body.top_p;
  if (finite(body.top_k)) out.topK = Math.trunc(body.top_k);
  return out;
}
