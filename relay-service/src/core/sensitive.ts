/**
 * The sensitive-word options of seed 000 (CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled,
 * CheckSensitiveOnCompletionEnabled, StopOnSensitiveEnabled, SensitiveWords one per line). Matching is
 * case-insensitive substring search; word lists are short (admins type them), so a linear scan per word beats
 * building an automaton on every option change.
 */
import { geminiEmbedTexts } from '../providers/bridges/gemini-embed.ts';
import type { Endpoint } from '../providers/types.ts';
import type { OptionReader } from './pricing.ts';

export type SensitivePolicy = {
  words: readonly string[];
  onPrompt: boolean;
  onCompletion: boolean;
  stop: boolean;
};

// The parsed list for the last raw SensitiveWords value: options change rarely, requests read them constantly.
let cachedRaw: string | null = null;
let cachedWords: readonly string[] = [];

function wordList(raw: string): readonly string[] {
  if (raw !== cachedRaw) {
    cachedWords = Object.freeze(
      raw
        .split('\n')
        .map((w) => w.trim().toLowerCase())
        .filter(Boolean),
    );
    cachedRaw = raw;
  }
  return cachedWords;
}

export function sensitivePolicy(options: OptionReader): SensitivePolicy {
  const enabled = options.get('CheckSensitiveEnabled');
  const words = wordList(options.get('SensitiveWords'));
  return {
    words,
    onPrompt: enabled && options.get('CheckSensitiveOnPromptEnabled') && words.length > 0,
    onCompletion: enabled && options.get('CheckSensitiveOnCompletionEnabled') && words.length > 0,
    stop: options.get('StopOnSensitiveEnabled'),
  };
}

/** The sensitive words found in `text` (lowercased, in list order). */
export function findSensitive(text: string, words: readonly string[]): string[] {
  if (!text || words.length === 0) return [];
  const lower = text.toLowerCase();
  return words.filter((w) => lower.includes(w));
}

function textOf(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) textOf(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    // Content parts ({type:'text', text}) and Responses input items ({content}).
    if (typeof o.text === 'string') out.push(o.text);
    if (o.content !== undefined) textOf(o.content, out);
  }
}

/** The user-written text of a request, for the prompt check. */
export function promptText(endpoint: Endpoint, body: Record<string, unknown> | FormData): string {
  if (body instanceof FormData) {
    const p = body.get('prompt');
    return typeof p === 'string' ? p : '';
  }
  const out: string[] = [];
  switch (endpoint) {
    case 'chat':
      for (const m of Array.isArray(body.messages) ? body.messages : [])
        textOf((m as { content?: unknown })?.content, out);
      break;
    case 'responses':
      textOf(body.instructions, out);
      textOf(body.input, out);
      break;
    case 'embed':
      out.push(...geminiEmbedTexts(body));
      break;
    case 'generate':
      // Gemini format: text parts of systemInstruction and of each content.
      for (const c of [
        body.systemInstruction ?? body.system_instruction,
        ...(Array.isArray(body.contents) ? body.contents : []),
      ])
        textOf(typeof c === 'string' ? c : (c as { parts?: unknown } | null)?.parts, out);
      break;
    case 'completions':
    case 'images':
    case 'imageEdits':
      textOf(body.prompt, out);
      break;
    default:
      textOf(body.input, out);
      textOf(body.query, out);
  }
  return out.join('\n');
}
