import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj } from '../json.ts';

/** A non-negative integer count, 0 for anything else (upstreams send null, strings or floats now and then). */
function count(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0;
}

const sub = (o: Obj, key: string): Obj => (isObject(o[key]) ? (o[key] as Obj) : {});

/**
 * Normalises every usage shape of the OpenAI family to Usage:
 * - chat/completions/embeddings: `prompt_tokens`, `completion_tokens`, `prompt_tokens_details.{cached,audio,image}_tokens`,
 *   `completion_tokens_details.{reasoning,audio}_tokens`; DeepSeek `prompt_cache_hit_tokens`, Moonshot `cached_tokens`;
 * - Responses API and token-billed transcriptions: `input_tokens`, `output_tokens`, `input_tokens_details` (or
 *   transcription's `input_token_details`), `output_tokens_details.reasoning_tokens`;
 * - rerank: `usage.total_tokens` only (Jina), or Cohere-style `meta.tokens` passed in by the caller.
 * Returns null when nothing was counted, so core falls back to local counting rather than billing zero.
 */
export function parseOpenAIUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const responsesShape = 'input_tokens' in raw || 'output_tokens' in raw;
  let prompt: number;
  let completion: number;
  let inDetails: Obj;
  let outDetails: Obj;
  if (responsesShape) {
    prompt = count(raw.input_tokens);
    completion = count(raw.output_tokens);
    inDetails = isObject(raw.input_tokens_details)
      ? raw.input_tokens_details
      : sub(raw, 'input_token_details');
    outDetails = sub(raw, 'output_tokens_details');
  } else {
    prompt = count(raw.prompt_tokens);
    completion = count(raw.completion_tokens);
    inDetails = sub(raw, 'prompt_tokens_details');
    outDetails = sub(raw, 'completion_tokens_details');
  }
  const total = count(raw.total_tokens);
  // Embeddings and rerank report only prompt (or only total) tokens.
  if (prompt === 0 && completion === 0 && total > 0) prompt = total;
  else if (completion === 0 && total > prompt) completion = total - prompt;
  if (prompt === 0 && completion === 0) return null;

  const cached =
    count(inDetails.cached_tokens) || count(raw.prompt_cache_hit_tokens) || count(raw.cached_tokens);
  return usage({
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: Math.min(cached, prompt),
    reasoningTokens: Math.min(count(outDetails.reasoning_tokens), completion),
    audioPromptTokens: Math.min(count(inDetails.audio_tokens), prompt),
    audioCompletionTokens: Math.min(count(outDetails.audio_tokens), completion),
    imageTokens: Math.min(count(inDetails.image_tokens), prompt),
  });
}

/** Usage of a rerank reply: `usage` (Jina, SiliconFlow) or Cohere's `meta.tokens` / `meta.billed_units`. */
export function parseRerankUsage(body: Obj): Usage | null {
  const direct = parseOpenAIUsage(body.usage);
  if (direct) return direct;
  const meta = sub(body, 'meta');
  const tokens = isObject(meta.tokens) ? meta.tokens : sub(meta, 'billed_units');
  return parseOpenAIUsage({ input_tokens: tokens.input_tokens, output_tokens: tokens.output_tokens });
}
