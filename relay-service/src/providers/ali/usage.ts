/**
 * DashScope usage → the normalised Usage. Chat replies report `input_tokens`, `output_tokens`, `total_tokens`,
 * with `prompt_tokens_details.cached_tokens` for context-cache hits and `output_tokens_details.reasoning_tokens`
 * for thinking models (both part of the totals, as in OpenAI's semantics); vision models add `image_tokens` (or
 * `input_tokens_details.image_tokens`), part of the input and priced at the image ratio; embeddings report
 * `total_tokens` only.
 * Stream chunks carry the running totals, so the last one seen is the call's usage.
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj } from '../json.ts';

const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0;
const sub = (o: Obj, key: string): Obj => (isObject(o[key]) ? (o[key] as Obj) : {});

export function dashScopeUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  let prompt = count(raw.input_tokens);
  let completion = count(raw.output_tokens);
  const total = count(raw.total_tokens);
  // Embeddings: only the total, all of it input.
  if (prompt === 0 && completion === 0) prompt = total;
  else if (completion === 0 && total > prompt) completion = total - prompt;
  if (prompt === 0 && completion === 0) return null;
  return usage({
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: Math.min(count(sub(raw, 'prompt_tokens_details').cached_tokens), prompt),
    reasoningTokens: Math.min(count(sub(raw, 'output_tokens_details').reasoning_tokens), completion),
    imageTokens: Math.min(
      count(raw.image_tokens) || count(sub(raw, 'input_tokens_details').image_tokens),
      prompt,
    ),
  });
}

/** The OpenAI `usage` object for the same figures. */
export function openAIUsageOf(u: Usage): Obj {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}
