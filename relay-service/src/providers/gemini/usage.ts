/**
 * Gemini usageMetadata → the normalised Usage. Gemini's `promptTokenCount` already INCLUDES
 * `cachedContentTokenCount`, but `toolUsePromptTokenCount` (tool results Google fed back itself) and
 * `thoughtsTokenCount` are reported OUTSIDE `promptTokenCount` / `candidatesTokenCount`: they are added here, so
 * thinking is billed as completion (new-api left it out, #1014) and nothing is counted twice.
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj } from '../json.ts';

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** Tokens of one modality in a `promptTokensDetails` list ([{modality:"AUDIO",tokenCount:12}]). */
function modality(details: unknown, name: string): number {
  if (!Array.isArray(details)) return 0;
  return details.reduce(
    (sum: number, d) => sum + (isObject(d) && d.modality === name ? n(d.tokenCount) : 0),
    0,
  );
}

export function geminiUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = n(raw.promptTokenCount) + n(raw.toolUsePromptTokenCount);
  const thoughts = n(raw.thoughtsTokenCount);
  const completion = n(raw.candidatesTokenCount) + thoughts;
  if (prompt === 0 && completion === 0) return null;
  return usage({
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: Math.min(n(raw.cachedContentTokenCount), prompt),
    reasoningTokens: thoughts,
    audioPromptTokens: modality(raw.promptTokensDetails, 'AUDIO'),
    imageTokens: modality(raw.promptTokensDetails, 'IMAGE'),
    audioCompletionTokens: modality(raw.candidatesTokensDetails, 'AUDIO'),
  });
}

/** The OpenAI `usage` object a chat client expects for the same figures. */
export function openAIUsageOf(u: Usage): Obj {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}
