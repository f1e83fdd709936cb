/**
 * What a request may cost, read from the request alone, for the quota hold (ADR 009, issue 13 item 3). Every
 * shape the relay accepts is bounded: text is counted (core/tokenize.ts), each part whose size in tokens cannot
 * be known from the request reserves a documented ceiling, the output is bounded by the request's own limit
 * (or OUTPUT_CEILING_TOKENS without one) times the number of outputs it asks for.
 */
import type { Endpoint } from '../providers/types.ts';
import { badRequest } from './errors.ts';
import type { EstimateInput } from './pricing.ts';
import { countPromptTokensDetailed } from './tokenize.ts';

/**
 * One image, whatever its size or detail: above the largest published per-image count of the providers we
 * route to: OpenAI's tiles (gpt-4o high detail, 2048×768: 85 + 8·170 = 1,445), OpenAI's patch models
 * (1,536 patches × up to 2.46 = 3,779), Claude (≈1,600 once resized) and Gemini (258 per 768-px tile). The
 * gpt-4o-mini family multiplies image tokens by 33 (up to 48,169 per image) and is the one exception ADR 009
 * names.
 */
export const IMAGE_HOLD_TOKENS = 4_096;

/**
 * A part whose cost cannot be estimated from the request: a file or document (a PDF is billed per page as text
 * plus an image of the page, and a few kilobytes can hold a hundred pages), video, a file referenced by id or
 * URL, a stored conversation (Responses `previous_response_id`, `item_reference`). What an upstream bills for
 * one part is bounded by the context window it has to fit in: 200,000 tokens is Claude's and the o-series'
 * window and above gpt-4o's (128k). Models with a 1M window (Gemini, gpt-4.1) can exceed it; ADR 009 says so.
 */
export const OPAQUE_PART_HOLD_TOKENS = 200_000;

/**
 * Inline audio: bytes per token, at most. Audio is billed by duration (OpenAI 10 tokens/s, Gemini 32 tokens/s);
 * 20 bytes per token covers 32 tokens/s down to 5.1 kbit/s, below the lowest bitrate of the formats the
 * providers take (MP3 8 kbit/s, Opus 6 kbit/s). Capped at OPAQUE_PART_HOLD_TOKENS like any part (it has to
 * fit in the window).
 */
export const AUDIO_BYTES_PER_TOKEN = 20;

/**
 * Output tokens held per output when the request sets no limit (and PreConsumedQuota is lower): the largest
 * output of the common chat models (gpt-4.1 32,768; gpt-4o 16,384; Claude 3.x 8,192). A call without a limit to
 * a model that writes more (o-series, Claude 4, Gemini 2.5) may exceed its hold by the rest. On a balance below
 * this hold the relay holds what is spendable, down to PreConsumedQuota output tokens (flexible hold, ADR 009).
 */
export const OUTPUT_CEILING_TOKENS = 32_768;

/** The largest output limit accepted: every provider's field is a 32-bit integer. Larger values get a 400. */
export const MAX_OUTPUT_TOKENS = 2_147_483_647;

/** The largest `n` / `best_of` / `candidateCount` accepted (OpenAI's limit). Larger values get a 400. */
export const MAX_OUTPUTS = 128;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Endpoints that generate no tokens of their own: their allowance stays PreConsumedQuota, as before. */
const NO_OUTPUT: ReadonlySet<Endpoint> = new Set(['embeddings', 'embed', 'moderations', 'rerank']);

export type MediaBound = {
  /** Ceilings of images, files, documents, video and references, priced as prompt text. */
  tokens: number;
  /** Ceilings of audio parts, priced at the audio rate. */
  audioTokens: number;
};

function audioBytesTokens(bytes: number): number {
  return Math.min(OPAQUE_PART_HOLD_TOKENS, Math.ceil(bytes / AUDIO_BYTES_PER_TOKEN));
}

/** Decoded size of base64 data (a data: URL prefix is counted too; a few bytes more is still a bound). */
function base64Bytes(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.ceil((data.length * 3) / 4) - pad;
}

/** An inline or referenced Gemini blob by its MIME type. */
function geminiBlob(out: MediaBound, blob: Json, inline: boolean): void {
  const mime = str(blob.mimeType ?? blob.mime_type).toLowerCase();
  if (mime.startsWith('image/')) out.tokens += IMAGE_HOLD_TOKENS;
  else if (mime.startsWith('audio/'))
    out.audioTokens += inline ? audioBytesTokens(base64Bytes(str(blob.data))) : OPAQUE_PART_HOLD_TOKENS;
  else out.tokens += OPAQUE_PART_HOLD_TOKENS;
}

/**
 * The media ceilings of a JSON body, found by shape wherever they sit (chat, Responses, Claude and Gemini
 * formats, and anything nested): an object that is not one of these adds nothing, so a false match can only
 * make a hold larger. Iterative, so a deeply nested body cannot overflow the stack; linear in the body's size.
 */
export function mediaBound(endpoint: Endpoint, body: Json | FormData): MediaBound {
  const out: MediaBound = { tokens: 0, audioTokens: 0 };
  if (body instanceof FormData) {
    for (const [, v] of body) {
      if (typeof v === 'string') continue;
      if (endpoint === 'transcriptions' || endpoint === 'translations')
        out.audioTokens += audioBytesTokens(v.size);
      else if (endpoint === 'images' || endpoint === 'imageEdits') out.tokens += IMAGE_HOLD_TOKENS;
      else out.tokens += OPAQUE_PART_HOLD_TOKENS;
    }
    return out;
  }
  // Responses: a stored conversation the upstream prepends.
  if (str(body.previous_response_id) || body.conversation !== undefined)
    out.tokens += OPAQUE_PART_HOLD_TOKENS;
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
      continue;
    }
    if (!isObject(v)) continue;
    switch (v.type) {
      case 'image_url': // chat
      case 'input_image': // Responses
      case 'image': // Claude
        out.tokens += IMAGE_HOLD_TOKENS;
        break;
      case 'input_audio': {
        // chat {input_audio: {data, format}}; Responses the same, or a file reference.
        const data = isObject(v.input_audio) ? str(v.input_audio.data) : str(v.data);
        out.audioTokens += data ? audioBytesTokens(base64Bytes(data)) : OPAQUE_PART_HOLD_TOKENS;
        break;
      }
      case 'file': // chat
      case 'input_file': // Responses
      case 'document': // Claude
      case 'item_reference': // Responses
      case 'container_upload': // Claude
        out.tokens += OPAQUE_PART_HOLD_TOKENS;
        break;
    }
    const inline = v.inlineData ?? v.inline_data;
    if (isObject(inline)) geminiBlob(out, inline, true);
    const file = v.fileData ?? v.file_data;
    // chat's {type: 'file', file: {file_data}} is counted above; Gemini's file_data is an object.
    if (isObject(file)) geminiBlob(out, file, false);
    for (const k in v) {
      const x = v[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
    }
  }
  return out;
}

/** The request's output limit per output, refused with a 400 when it is beyond any model's. */
export function outputLimit(body: Json | FormData): number | undefined {
  if (body instanceof FormData) return undefined;
  const g = body.generationConfig ?? body.generation_config;
  const gemini = isObject(g) ? g : {};
  const fields: [string, unknown][] = [
    ['max_completion_tokens', body.max_completion_tokens],
    ['max_tokens', body.max_tokens],
    ['max_output_tokens', body.max_output_tokens],
    ['generationConfig.maxOutputTokens', gemini.maxOutputTokens ?? gemini.max_output_tokens],
  ];
  for (const [name, v] of fields) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) continue;
    if (v > MAX_OUTPUT_TOKENS) throw badRequest(`${name} must be at most ${MAX_OUTPUT_TOKENS}`, name);
    return Math.floor(v);
  }
  return undefined;
}

/** How many outputs the request asks for (chat and completions `n`, completions `best_of`, Gemini candidates). */
export function outputCount(body: Json | FormData): number {
  if (body instanceof FormData) {
    const n = Number(body.get('n') ?? 1);
    return Number.isInteger(n) && n > 0 && n <= MAX_OUTPUTS ? n : 1;
  }
  const g = body.generationConfig ?? body.generation_config;
  const gemini = isObject(g) ? g : {};
  const fields: [string, unknown][] = [
    ['n', body.n],
    ['best_of', body.best_of],
    ['generationConfig.candidateCount', gemini.candidateCount ?? gemini.candidate_count],
  ];
  let outputs = 1;
  for (const [name, v] of fields) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) continue;
    if (v > MAX_OUTPUTS) throw badRequest(`${name} must be at most ${MAX_OUTPUTS}`, name);
    outputs = Math.max(outputs, Math.ceil(v));
  }
  return outputs;
}

export type RequestHold = {
  /** The prompt estimate (text, overheads, flat image estimates): local usage when the upstream reports none. */
  promptTokens: number;
  /** What estimateQuota bounds the cost from. */
  estimate: EstimateInput;
};

/**
 * The prompt estimate and the hold input of a request. `calls` is the fixed-price multiplier (images: `n`).
 * Throws a 400 RelayError for an output limit or output count no model accepts.
 */
export async function requestHold(
  endpoint: Endpoint,
  body: Json | FormData,
  model: string,
  preConsumedQuota: number,
): Promise<RequestHold> {
  const maxTokens = outputLimit(body);
  const outputs = outputCount(body);
  // Multipart bodies count their `prompt` field; the files are in the media bound.
  const counted = await countPromptTokensDetailed(endpoint, body, model);
  const media = mediaBound(endpoint, body);
  const calls = endpoint === 'images' || endpoint === 'imageEdits' ? outputs : 1;
  return {
    // Multipart audio calls keep local usage at 0 prompt tokens (billed by duration or a fixed price); an image
    // edit's local usage is its prompt, like an image generation's.
    promptTokens: body instanceof FormData && endpoint !== 'imageEdits' ? 0 : counted.tokens,
    estimate: {
      // The flat image estimates are replaced by the image ceilings of the media scan.
      promptTokens: counted.tokens - counted.imageTokens + media.tokens,
      audioPromptTokens: media.audioTokens,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      defaultMaxTokens: NO_OUTPUT.has(endpoint)
        ? preConsumedQuota
        : Math.max(preConsumedQuota, OUTPUT_CEILING_TOKENS),
      outputs,
      calls,
    },
  };
}
