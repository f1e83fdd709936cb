/**
 * The one normalised usage shape every provider adaptor produces (ARCHITECTURE.md §4 step 4). Semantics are
 * OpenAI's: `promptTokens` INCLUDES cached reads and cache writes; `completionTokens` INCLUDES reasoning and
 * audio output. Adaptors for providers that report them separately (Claude: input excludes cache) add them up,
 * so pricing has one formula and no double counting.
 */
export type Usage = {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the upstream's prompt cache (part of promptTokens). */
  cachedTokens: number;
  /** Prompt tokens written to the upstream's prompt cache (part of promptTokens). */
  cacheWriteTokens: number;
  /** Reasoning/thinking tokens (part of completionTokens). */
  reasoningTokens: number;
  /** Audio input tokens (part of promptTokens). */
  audioPromptTokens: number;
  /** Audio output tokens (part of completionTokens). */
  audioCompletionTokens: number;
  /** Image input tokens (part of promptTokens). */
  imageTokens: number;
};

export const ZERO_USAGE: Usage = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  audioPromptTokens: 0,
  audioCompletionTokens: 0,
  imageTokens: 0,
});

export function usage(partial: Partial<Usage>): Usage {
  return { ...ZERO_USAGE, ...partial };
}

export const totalTokens = (u: Usage): number => u.promptTokens + u.completionTokens;
