/**
 * Claude usage → the normalised Usage. Claude's `input_tokens` EXCLUDES cache reads and cache writes (they are
 * reported apart), while Usage follows OpenAI semantics where the prompt includes them: add them up here so
 * pricing charges each token once at its own ratio (gateway-behaviour §3.2, §7 item 2).
 */
import { type Usage, usage } from '../../core/usage.ts';

type Obj = Record<string, unknown>;
const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

export type ClaudeUsageParts = { input: number; output: number; cacheRead: number; cacheWrite: number };

export function claudeUsageParts(raw: unknown): ClaudeUsageParts | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const u = raw as Obj;
  return {
    input: n(u.input_tokens),
    output: n(u.output_tokens),
    cacheRead: n(u.cache_read_input_tokens),
    cacheWrite: n(u.cache_creation_input_tokens),
  };
}

export function claudeUsage(parts: ClaudeUsageParts | null): Usage | null {
  if (!parts) return null;
  const prompt = parts.input + parts.cacheRead + parts.cacheWrite;
  if (prompt === 0 && parts.output === 0) return null;
  return usage({
    promptTokens: prompt,
    completionTokens: parts.output,
    cachedTokens: parts.cacheRead,
    cacheWriteTokens: parts.cacheWrite,
  });
}

/** The OpenAI `usage` object a chat client expects for the same figures. */
export function openAIUsageOf(u: Usage): Obj {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
  };
}
