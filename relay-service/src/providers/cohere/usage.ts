/**
 * Cohere usage → the normalised Usage. Chat reports `usage.tokens` (what the model read and wrote) and
 * `usage.billed_units` (what Cohere bills); the relay bills `tokens`, falling back to `billed_units` when a reply
 * carries only those. `cached_tokens` (prompt tokens served from Cohere's cache) is part of the prompt.
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj } from '../json.ts';

const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;

/** `usage` of a chat reply or of message-end, or `meta` of embed and rerank (the same fields). */
export function cohereUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const pick = (o: unknown): { input: number; output: number } | null => {
    if (!isObject(o)) return null;
    const input = count(o.input_tokens);
    const output = count(o.output_tokens);
    return input || output ? { input, output } : null;
  };
  const figures = pick(raw.tokens) ?? pick(raw.billed_units);
  if (!figures) return null;
  return usage({
    promptTokens: figures.input,
    completionTokens: figures.output,
    cachedTokens: Math.min(count(raw.cached_tokens), figures.input),
  });
}

/** The OpenAI `usage` object for the same figures. */
export function openAIUsage(u: Usage): Obj {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    ...(u.cachedTokens ? { prompt_tokens_details: { cached_tokens: u.cachedTokens } } : {}),
  };
}
