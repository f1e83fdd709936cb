/**
 * Local token counting (gateway-behaviour §3.2-3.3): the prompt estimate behind the quota hold, and the
 * fallback when an upstream reports no usage. Counts are OpenAI's tiktoken encodings via gpt-tokenizer; for
 * other providers they are an approximation, which is all a hold needs.
 *
 * The encodings are large, so each is imported on first use and kept. `tokenCounter(model)` resolves once;
 * the `*With` functions are synchronous for hot loops (counting a stream's text chunk by chunk).
 *
 * Counting is linear and bounded (issue 13, ADR 009): gpt-tokenizer's BPE is quadratic in the length of one
 * pre-tokenized piece (120,000 'A's took 12 s, 20,000 CJK characters 2 s), so text reaches it in segments cut
 * where the cut cannot change the count (before a space that follows a non-space) and every run without such a
 * place is cut at MAX_RUN_CHARS. The async counters yield to the event loop every YIELD_AFTER_MS, and past
 * TOKENIZE_BUDGET_CHARS characters per call they count UTF-8 bytes instead: every byte-level BPE (tiktoken,
 * Claude's, SentencePiece with byte fallback) makes at most one token per byte, so bytes are an upper bound.
 */
import { claudeToChat } from '../providers/bridges/claude-chat.ts';
import { geminiToChat } from '../providers/bridges/gemini-chat.ts';
import { geminiEmbedTexts } from '../providers/bridges/gemini-embed.ts';
import type { Endpoint } from '../providers/types.ts';

export type EncodingName = 'o200k_base' | 'cl100k_base';

export type TokenCounter = {
  readonly encoding: EncodingName;
  /**
   * Tokens of plain text. Special-token markers such as <|endoftext|> count as the text they are. Linear in the
   * length of `text` (see `segments`) but synchronous: the async functions below yield on long input.
   */
  count(text: string): number;
  /** Tokens of one segment from `segments()` (no cutting). */
  countSegment(segment: string): number;
  /** The estimate for one image part (default: the flat OpenAI estimate); lets a walk see the images. */
  image?(image: unknown): number;
};

/**
 * cl100k_base for the gpt-3.5 / gpt-4 (incl. gpt-4-turbo) families and the OpenAI embeddings; o200k_base for
 * gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series and every model we do not know (the current OpenAI encoding).
 */
export function encodingForModel(model: string): EncodingName {
  const m = model.replace(/^ft:/, '').toLowerCase();
  if (/^gpt-3\.5/.test(m) || /^gpt-4(-|$)/.test(m) || /^text-embedding-(3-|ada-002)/.test(m))
    return 'cl100k_base';
  return 'o200k_base';
}

const counters = new Map<EncodingName, Promise<TokenCounter>>();

async function loadCounter(encoding: EncodingName): Promise<TokenCounter> {
  const mod =
    encoding === 'cl100k_base'
      ? await import('gpt-tokenizer/encoding/cl100k_base')
      : await import('gpt-tokenizer/encoding/o200k_base');
  // Client text is data: never let it be read as (or rejected for containing) a special token.
  const options = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  return {
    encoding,
    count(text) {
      if (text.length <= MAX_RUN_CHARS) return text === '' ? 0 : mod.countTokens(text, options);
      let n = 0;
      for (const seg of segments(text)) n += mod.countTokens(seg, options);
      return n;
    },
    countSegment: (seg) => mod.countTokens(seg, options),
  };
}

// ---- bounded counting ---------------------------------------------------------------------------------------

/**
 * The longest run without a cut place given to BPE as one piece. Its cost grows with the square of a piece's
 * length; at 128 characters a run of CJK costs about 0.5 µs per character, like ordinary prose. Runs this long
 * are rare in prose (URLs, base64, minified JSON, CJK without spaces); cutting one changes its count by about
 * one token per cut.
 */
export const MAX_RUN_CHARS = 128;
/** Text per tokenizer call when no cut is forced (ordinary prose: well under 1 ms). */
const SEGMENT_CHARS = 4096;
/** Characters tokenized per async call (a request's prompt, a reply's text); the rest counts as UTF-8 bytes. */
export const TOKENIZE_BUDGET_CHARS = 1 << 18;
/** The async counters give the event loop a turn after this much synchronous work. */
export const YIELD_AFTER_MS = 2;

/** JavaScript's \s (what the tokenizers' pre-tokenizer regexes use). */
function isSpace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    (c > 127 &&
      (c === 0xa0 ||
        c === 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x202f ||
        c === 0x205f ||
        c === 0x3000 ||
        c === 0xfeff))
  );
}

/**
 * `text` in segments whose counts add up to the count of the whole. A cut before a space that follows a
 * non-space is exact for o200k_base and cl100k_base: no piece of their pre-tokenizer ends in such a space or
 * starts before it (words, numbers and punctuation stop at whitespace; whitespace pieces start with it; the
 * regexes look ahead, never behind). A run longer than MAX_RUN_CHARS without such a place is cut anyway.
 */
export function* segments(text: string): Generator<string> {
  const n = text.length;
  let start = 0;
  let cut = -1;
  let run = 0;
  let prevSpace = true;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      if (c === 32 && !prevSpace && i > start) cut = i;
      prevSpace = true;
      run = 0;
    } else {
      prevSpace = false;
      // Never between the halves of a surrogate pair.
      if (++run > MAX_RUN_CHARS && (c < 0xdc00 || c > 0xdfff)) {
        yield text.slice(start, i);
        start = i;
        cut = -1;
        run = 1;
        continue;
      }
    }
    if (i - start >= SEGMENT_CHARS && cut > start) {
      yield text.slice(start, cut);
      start = cut;
      cut = -1;
    }
  }
  if (start < n) yield text.slice(start);
}

/** UTF-8 length of `text` (an upper bound of its tokens in any byte-level BPE). */
export function utf8Bytes(text: string, from = 0, to = text.length): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** setImmediate where there is one (Node): setTimeout(0) would add a 1 ms clamp per turn. */
const yieldToLoop = (): Promise<void> =>
  new Promise((resolve) =>
    typeof globalThis.setImmediate === 'function' ? globalThis.setImmediate(resolve) : setTimeout(resolve, 0),
  );

/**
 * Tokens of `texts` with no synchronous stretch longer than about YIELD_AFTER_MS (plus one segment), the first
 * TOKENIZE_BUDGET_CHARS characters by the tokenizer and the rest as UTF-8 bytes.
 */
export async function countTextsBounded(c: TokenCounter, texts: readonly string[]): Promise<number> {
  let total = 0;
  let budget = TOKENIZE_BUDGET_CHARS;
  let since = performance.now();
  // Checked after each piece of work; awaited only when due (an await each time would cost more than counting
  // a short prompt).
  const due = () => performance.now() - since >= YIELD_AFTER_MS;
  const breathe = async () => {
    await yieldToLoop();
    since = performance.now();
  };
  for (const text of texts) {
    if (text.length > budget) {
      budget = 0;
      for (let i = 0; i < text.length; i += 1 << 16) {
        total += utf8Bytes(text, i, Math.min(text.length, i + (1 << 16)));
        if (due()) await breathe();
      }
      continue;
    }
    budget -= text.length;
    // Most texts (roles, names, short messages) are too short to need cutting.
    if (text.length <= MAX_RUN_CHARS) total += c.countSegment(text);
    else
      for (const seg of segments(text)) {
        total += c.countSegment(seg);
        if (due()) await breathe();
      }
    if (due()) await breathe();
  }
  return total;
}

/** A counter that records the texts it is asked about (and counts them as 0) for countTextsBounded. */
function collector(c: TokenCounter): TokenCounter & { texts: string[]; images: number } {
  const texts: string[] = [];
  const out = {
    encoding: c.encoding,
    texts,
    images: 0,
    count(text: string) {
      if (text !== '') texts.push(text);
      return 0;
    },
    countSegment: () => 0,
    image(image: unknown) {
      const n = imageTokens(image);
      out.images += n;
      return n;
    },
  };
  return out;
}

/** The counter for `model`'s encoding (loaded once per process). */
export function tokenCounter(model: string): Promise<TokenCounter> {
  const encoding = encodingForModel(model);
  let counter = counters.get(encoding);
  if (!counter) {
    counter = loadCounter(encoding);
    counters.set(encoding, counter);
    counter.catch(() => counters.delete(encoding));
  }
  return counter;
}

export async function countTextTokens(text: string, model: string): Promise<number> {
  return countTextsBounded(await tokenCounter(model), [text]);
}

// ---- chat ---------------------------------------------------------------------------------------------------

/** OpenAI's chat accounting (openai-cookbook "How to count tokens with tiktoken"). */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMER = 3;

/**
 * Image inputs are not fetched, so they get a flat estimate from OpenAI's vision pricing: `detail: "low"` is a
 * fixed 85 tokens; otherwise 85 + 170 per 512-px tile, and a 1024×1024 image (scaled to 768×768, 4 tiles)
 * is 765. Audio and file parts count 0 (their size is not known from the request).
 */
export const IMAGE_TOKENS_LOW = 85;
export const IMAGE_TOKENS_HIGH = 765;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function imageTokens(image: unknown): number {
  const detail = isObject(image) ? image.detail : undefined;
  return detail === 'low' ? IMAGE_TOKENS_LOW : IMAGE_TOKENS_HIGH;
}

/** Content as a string, or an array of parts (chat `text`/`image_url`, Responses `input_text`/`input_image`...). */
function contentTokens(c: TokenCounter, content: unknown): number {
  if (typeof content === 'string') return c.count(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) {
    if (typeof part === 'string') n += c.count(part);
    else if (!isObject(part)) continue;
    else if (part.type === 'image_url') n += c.image ? c.image(part.image_url) : imageTokens(part.image_url);
    else if (part.type === 'input_image') n += c.image ? c.image(part) : imageTokens(part);
    else if (typeof part.text === 'string') n += c.count(part.text);
    else if (typeof part.refusal === 'string') n += c.count(part.refusal);
  }
  return n;
}

function functionCallTokens(c: TokenCounter, call: unknown): number {
  if (!isObject(call)) return 0;
  const fn = isObject(call.function) ? call.function : call;
  const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? '');
  return c.count(str(fn.name)) + c.count(args);
}

function messageTokens(c: TokenCounter, message: unknown): number {
  if (!isObject(message)) return 0;
  let n = TOKENS_PER_MESSAGE + c.count(str(message.role)) + contentTokens(c, message.content);
  if (typeof message.name === 'string') n += c.count(message.name) + TOKENS_PER_NAME;
  // Assistant turns that called tools: their names and arguments are prompt text on the next call.
  if (Array.isArray(message.tool_calls))
    for (const call of message.tool_calls) n += functionCallTokens(c, call);
  if (message.function_call !== undefined) n += functionCallTokens(c, message.function_call);
  return n;
}

/** Tool and function definitions, counted as their JSON text. */
function toolsTokens(c: TokenCounter, tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? c.count(JSON.stringify(tools)) : 0;
}

/** Chat prompt tokens: per message 3 + role + content (+ name + 1), 3 for the reply primer, plus tools. */
export function countChatPromptTokensWith(c: TokenCounter, messages: unknown, tools?: unknown): number {
  let n = REPLY_PRIMER + toolsTokens(c, tools);
  if (Array.isArray(messages)) for (const m of messages) n += messageTokens(c, m);
  return n;
}

export async function countChatPromptTokens(
  messages: unknown,
  model: string,
  tools?: unknown,
): Promise<number> {
  const c = await tokenCounter(model);
  const col = collector(c);
  return countChatPromptTokensWith(col, messages, tools) + (await countTextsBounded(c, col.texts));
}

// ---- every endpoint -----------------------------------------------------------------------------------------

/** A string, an array of strings, a token array or an array of token arrays (completions, embeddings). */
function textOrTokensTokens(c: TokenCounter, input: unknown): number {
  if (typeof input === 'string') return c.count(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((x) => typeof x === 'number')) return input.length;
  let n = 0;
  for (const item of input) {
    if (typeof item === 'string') n += c.count(item);
    else if (Array.isArray(item)) n += item.filter((x) => typeof x === 'number').length;
  }
  return n;
}

/** Responses API `input`: a string (one user message) or a list of items. */
function responsesInputTokens(c: TokenCounter, input: unknown): number {
  if (typeof input === 'string') return messageTokens(c, { role: 'user', content: input });
  if (!Array.isArray(input)) return 0;
  let n = 0;
  for (const item of input) {
    if (!isObject(item)) continue;
    if (item.type === 'function_call') n += functionCallTokens(c, item);
    else if (item.type === 'function_call_output')
      n += c.count(typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? ''));
    else if (typeof item.role === 'string') n += messageTokens(c, item);
    // Other items (reasoning with encrypted content, references to stored items) have no countable text.
  }
  return n;
}

function moderationTokens(c: TokenCounter, input: unknown): number {
  if (typeof input === 'string') return c.count(input);
  if (!Array.isArray(input)) return 0;
  return input.every((x) => typeof x === 'string') ? textOrTokensTokens(c, input) : contentTokens(c, input);
}

function rerankTokens(c: TokenCounter, body: Json): number {
  let n = c.count(str(body.query));
  if (Array.isArray(body.documents)) {
    for (const d of body.documents)
      n += typeof d === 'string' ? c.count(d) : isObject(d) ? c.count(str(d.text)) : 0;
  }
  return n;
}

/**
 * The prompt tokens of a request body, by endpoint. Multipart bodies (image edits, transcriptions) count their
 * `prompt` field only: audio is billed by duration or a fixed price, not by these tokens.
 */
export function countPromptTokensWith(c: TokenCounter, endpoint: Endpoint, body: Json | FormData): number {
  if (body instanceof FormData) {
    const prompt = body.get('prompt');
    return typeof prompt === 'string' ? c.count(prompt) : 0;
  }
  switch (endpoint) {
    case 'chat':
      return countChatPromptTokensWith(c, body.messages, body.tools ?? body.functions);
    case 'completions':
      return textOrTokensTokens(c, body.prompt);
    case 'embeddings':
      return textOrTokensTokens(c, body.input);
    case 'responses': {
      const instructions = typeof body.instructions === 'string' ? body.instructions : '';
      return (
        REPLY_PRIMER +
        (instructions ? messageTokens(c, { role: 'system', content: instructions }) : 0) +
        responsesInputTokens(c, body.input) +
        toolsTokens(c, body.tools)
      );
    }
    case 'moderations':
      return moderationTokens(c, body.input);
    case 'speech':
      return c.count(str(body.input));
    case 'images':
    case 'imageEdits':
      return c.count(str(body.prompt));
    case 'rerank':
      return rerankTokens(c, body);
    case 'transcriptions':
    case 'translations':
      return c.count(str(body.prompt));
    case 'messages':
      // Claude format: system apart, content as blocks; counted like the equivalent chat request.
      return countChatPromptTokensWith(c, claudeToChat(body).messages, body.tools);
    case 'embed':
      // Gemini embedContent / batchEmbedContents: the text parts of each content.
      return geminiEmbedTexts(body).reduce((n, t) => n + c.count(t), 0);
    case 'generate': {
      // Gemini format: counted like the equivalent chat request (system, turns, tools, function calls).
      const chat = geminiToChat(body, false);
      return countChatPromptTokensWith(c, chat.messages, chat.tools);
    }
  }
}

export type PromptCount = {
  /** The estimate: text, overheads and the flat image estimates (what countPromptTokens answers). */
  tokens: number;
  /** The part of `tokens` that is image estimates (a hold replaces it with its own ceilings). */
  imageTokens: number;
};

/** countPromptTokens with the image estimates apart; bounded and yielding like countTextsBounded. */
export async function countPromptTokensDetailed(
  endpoint: Endpoint,
  body: Json | FormData,
  model: string,
): Promise<PromptCount> {
  const c = await tokenCounter(model);
  const col = collector(c);
  const fixed = countPromptTokensWith(col, endpoint, body);
  return { tokens: fixed + (await countTextsBounded(c, col.texts)), imageTokens: col.images };
}

export async function countPromptTokens(
  endpoint: Endpoint,
  body: Json | FormData,
  model: string,
): Promise<number> {
  return (await countPromptTokensDetailed(endpoint, body, model)).tokens;
}
