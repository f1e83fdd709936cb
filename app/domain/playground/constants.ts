/**
 * Playground constants (seed 001 §2.14, §5 "Other", §9 "Playground defaults"), shared by the server and the
 * browser.
 */

export const PLAYGROUND_DEFAULT_MODEL = 'gpt-4o-mini';
export const PLAYGROUND_DEFAULT_SYSTEM = 'You are a helpful assistant';

/** Temperature slider 0.1 to 1, step 0.1 (new-api's default value 0.7). */
export const TEMPERATURE = { min: 0.1, max: 1, step: 0.1, default: 0.7 } as const;

/** max_tokens: 0 (the default) means unset. */
export const MAX_TOKENS_LIMIT = 1_000_000;

/** One message's text (the new question, the system prompt, or a message kept in the page). */
export const MAX_MESSAGE_CHARS = 8_000;
/**
 * What the page keeps of the conversation without JavaScript (hidden fields posted back each turn): at most this
 * many messages and characters; the oldest turns go first.
 */
export const MAX_HISTORY_MESSAGES = 40;
export const MAX_HISTORY_CHARS = 32_000;

/** Seed 001 §4 "Playground message". */
export type MessageStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export type ChatMessage = { role: 'user' | 'assistant'; content: string; status?: MessageStatus };

/** The left panel's settings. */
export type PlaygroundSettings = {
  group: string;
  model: string;
  temperature: number;
  max_tokens: number;
  system: string;
};

/** Temperature clamped to the slider's range and rounded to its step. */
export function clampTemperature(value: number): number {
  if (!Number.isFinite(value)) return TEMPERATURE.default;
  const clamped = Math.min(TEMPERATURE.max, Math.max(TEMPERATURE.min, value));
  return Math.round(clamped * 10) / 10;
}

/**
 * Keeps the newest messages within MAX_HISTORY_MESSAGES and MAX_HISTORY_CHARS, dropping from the oldest (the
 * newest turn, question and reply, always stays, however long); a leading assistant message left without its
 * question is dropped too.
 */
export function boundHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let chars = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    const newestTurn = kept.length < 2;
    if (!newestTurn && (kept.length >= MAX_HISTORY_MESSAGES || chars + m.content.length > MAX_HISTORY_CHARS))
      break;
    kept.unshift(m);
    chars += m.content.length;
  }
  while (kept[0]?.role === 'assistant') kept.shift();
  return kept;
}

/**
 * The messages sent to the model: the system prompt (when set), then the conversation's completed turns (a
 * reply marked error, or still loading, is not context), then the new question.
 */
export function requestMessages(
  system: string,
  history: readonly ChatMessage[],
  question: string,
): { role: string; content: string }[] {
  const out: { role: string; content: string }[] = [];
  if (system.trim()) out.push({ role: 'system', content: system });
  for (const m of history) {
    if (m.role === 'assistant' && m.status !== undefined && m.status !== 'complete') continue;
    out.push({ role: m.role, content: m.content });
  }
  out.push({ role: 'user', content: question });
  return out;
}

/** The default model of a list: gpt-4o-mini when there, else the first. */
export function defaultModel(models: readonly string[]): string {
  return models.includes(PLAYGROUND_DEFAULT_MODEL) ? PLAYGROUND_DEFAULT_MODEL : (models[0] ?? '');
}
