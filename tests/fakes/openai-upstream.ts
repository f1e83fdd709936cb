/**
 * A faithful fake of the OpenAI HTTP API (and Azure OpenAI's deployment routes) on loopback, for relay tests and
 * benchmarks: the official `openai` SDK can talk to it directly, so a relay can sit between the two.
 *
 * Deterministic defaults, so tests can hand-compute costs:
 * - "words" = whitespace-separated words (`countWords`). prompt_tokens = words in all request text (chat
 *   messages, `prompt`, `input`, `instructions`; token arrays count their length) — see `fakePromptTokens`.
 * - Completion text = `Hello from <model>`, split into word chunks `["Hello", " from", " <model>"]`
 *   (`fakeChunks`); completion_tokens = number of chunks (+ reasoning_tokens, which OpenAI counts inside
 *   completion_tokens). `max_tokens`/`max_completion_tokens`/`max_output_tokens` below that truncates the chunks
 *   and finishes with "length". `response_format` json_object/json_schema wraps the text as `{"message": text}`.
 * - Tool calls: the request has `tools` and the last user message contains "weather" -> the first tool is called
 *   with arguments `{"location":"<city after 'in'>"}` (default Paris), streamed in 8-character argument fragments;
 *   completion_tokens = number of fragments.
 * - Embeddings: `fakeEmbedding(text, dims)` (default 8 dims), values k/256 so float32 round-trips exactly.
 * - Transcriptions: 1 second of audio per 1000 uploaded bytes (`fakeAudioSeconds`); whisper models report
 *   `usage: {type:'duration', seconds: ceil}`, others token usage (10 audio tokens per second + prompt words in,
 *   text words out). gpt-image models report 100 output tokens per image and, for edits,
 *   FAKE_IMAGE_INPUT_TOKENS input image tokens per uploaded image or mask (`input_tokens_details`). Image edits
 *   (multipart: `image` or `image[]`, optional `mask`, `prompt`) answer like generations; a missing image or
 *   prompt is OpenAI's 400. Speech bytes: `fakeSpeechBytes`.
 * - Moderations flag "kill"/"violence" (violence) and "hate"; rerank scores = share of query words in the document.
 * - Azure streams start with a `choices: []` prompt_filter_results chunk, as Azure does (opt out with
 *   `azurePromptFilterChunk: false`).
 * - Rules (`on`) may override content, usage, status/error, headers, delays, and cut the stream. The first added
 *   matching rule wins; `times` counts it down. Rules apply after auth, so a rejected key always gets 401.
 *
 * Auth: OpenAI routes (`/v1/...`) need `Authorization: Bearer <key>`; Azure routes
 * (`/openai/deployments/<deployment>/<task>?api-version=...`, `/openai/models`, `/openai/responses`) need the
 * `api-key` header (or a Bearer token) and an `api-version` query parameter. Keys in `opts.rejectKeys` (or not in
 * `opts.keys`, when given) get OpenAI's/Azure's 401 body.
 *
 * Uses only node:http and web-standard APIs (Request.formData for multipart), so it also runs on Deno.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Usage overrides (flat; mapped to each endpoint's wire shape). Missing fields fall back to the defaults. */
export type FakeUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Defaults to prompt_tokens + completion_tokens. */
  total_tokens?: number;
  /** Prompt tokens read from cache (part of prompt_tokens). */
  cached_tokens?: number;
  /** Reasoning tokens (part of completion_tokens). */
  reasoning_tokens?: number;
  audio_prompt_tokens?: number;
  audio_completion_tokens?: number;
  /** gpt-image input image tokens (part of prompt_tokens; image generations and edits). */
  image_tokens?: number;
};

export type FakeError = { message: string; type: string; code?: string | null; param?: string | null };

export type FakeRespond = {
  usage?: FakeUsage;
  /** Replaces the generated text (chat, completions, responses, transcriptions). */
  content?: string;
  /**
   * Chat only: thinking text answered before the content as `reasoning_content` (DeepSeek's reasoner field, in
   * the message and as word deltas). Its tokens are whatever `usage.reasoning_tokens` says.
   */
  reasoningContent?: string;
  /** HTTP status; >= 400 answers with an error body (OpenAI's default body for that status unless `error`). */
  status?: number;
  /** Error body fields; alone it means status 400 (429 when type is `insufficient_quota`). */
  error?: FakeError;
  /** Raw response body (e.g. an HTML error page); sent as-is with `status` (default 200). */
  body?: string;
  headers?: Record<string, string>;
  /** Wait before answering. */
  delayMs?: number;
  /** Wait between stream events. */
  streamDelayMs?: number;
  /** Never report usage (no `usage` field, no usage chunk even with include_usage). */
  omitUsage?: boolean;
  /** Destroy the socket after this many SSE events (0 = before any response, also for non-stream requests). */
  dropAfterChunks?: number;
  /**
   * Chat streams only: instead of the text, content deltas of `chunkBytes` characters (`hey hey ...`, default
   * 32 KiB) until `bytes` are written, as fast as the reader takes them (the fake waits for 'drain', so it holds
   * little itself). `sent` counts the bytes written so far (the fake updates it).
   */
  flood?: { bytes: number; chunkBytes?: number; sent?: number };
};

export type FakeRule = {
  /** Matches the request's model, or the Azure deployment name. */
  model?: string | RegExp;
  /**
   * String: the request path, or the task part of it (`/chat/completions` matches `/v1/chat/completions` and
   * Azure's `/openai/deployments/x/chat/completions`, but `/completions` does not match chat). RegExp: the path.
   */
  path?: string | RegExp;
  /** The API key the request carried (Bearer or api-key). */
  key?: string;
  respond: FakeRespond;
  /** How many requests this rule answers before it expires (default: unlimited). */
  times?: number;
};

export type RecordedRequest = {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Header names lowercased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON body, or null (multipart, empty or unparsable). */
  body: Record<string, unknown> | null;
  /** Multipart field names in order (files included), when the body was multipart/form-data. */
  fields?: string[];
  /** Multipart text fields. */
  form?: Record<string, string>;
  /** Multipart files. */
  files?: { field: string; name: string; size: number; type: string }[];
  api: 'openai' | 'azure';
  /** Azure deployment segment. */
  deployment?: string;
  /** Key from `Authorization: Bearer` or `api-key`. */
  key: string | null;
  /** Date.now() at arrival. */
  time: number;
};

export type FakeBilling = {
  hardLimitUsd: number;
  softLimitUsd: number;
  systemHardLimitUsd: number;
  /** Month-to-date usage in cents (what /dashboard/billing/usage reports as total_usage). */
  totalUsageCents: number;
  hasPaymentMethod: boolean;
  /** Unix seconds. */
  accessUntil: number;
};

export type FakeOpenAIOptions = {
  /** When given, only these keys are accepted. */
  keys?: string[];
  /** Keys answered with 401 invalid_api_key. */
  rejectKeys?: string[];
  /** Models listed by GET /v1/models; when given, other models get 404 model_not_found. */
  models?: string[];
  /** Azure deployment -> model. When given, other deployments get 404 DeploymentNotFound. */
  deployments?: Record<string, string>;
  /** Default usage overrides for every request (rules override these). */
  usage?: FakeUsage;
  billing?: Partial<FakeBilling>;
  /** Fixed `created` timestamp (unix seconds) for every response. Default 1_700_000_000. */
  created?: number;
  /** Azure streams start with a `choices: []` chunk carrying prompt_filter_results, as Azure does. Default true. */
  azurePromptFilterChunk?: boolean;
};

export type FakeOpenAI = {
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  requests: RecordedRequest[];
  /** Mutable: tests may change the balance between calls. */
  billing: FakeBilling;
  on(rule: FakeRule): void;
  /** Drops rules and recorded requests; restores billing. */
  reset(): void;
  close(): Promise<void>;
};

export const DEFAULT_MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-3.5-turbo-instruct',
  'o3-mini',
  'text-embedding-3-small',
  'dall-e-3',
  'gpt-image-1',
  'tts-1',
  'whisper-1',
  'gpt-4o-transcribe',
  'omni-moderation-latest',
];

const DEFAULT_BILLING: FakeBilling = {
  hardLimitUsd: 100,
  softLimitUsd: 80,
  systemHardLimitUsd: 100,
  totalUsageCents: 0,
  hasPaymentMethod: true,
  accessUntil: 1_900_000_000,
};

/** Model the SDK/relay omitted for endpoints that have a default. */
const DEFAULT_MODEL: Record<string, string> = {
  '/images/generations': 'dall-e-2',
  '/images/edits': 'dall-e-2',
  '/moderations': 'omni-moderation-latest',
};

/** Endpoints that need a `model` (OpenAI routes; Azure takes it from the deployment). */
const NEEDS_MODEL = new Set([
  '/chat/completions',
  '/completions',
  '/embeddings',
  '/audio/speech',
  '/audio/transcriptions',
  '/audio/translations',
  '/responses',
  '/rerank',
]);

const AZURE_DEPLOYMENT_TASKS = new Set([
  '/chat/completions',
  '/completions',
  '/embeddings',
  '/images/generations',
  '/images/edits',
  '/audio/speech',
  '/audio/transcriptions',
  '/audio/translations',
  '/responses',
]);

/** Input image tokens a gpt-image model reports per uploaded image (and mask) of an edit. */
export const FAKE_IMAGE_INPUT_TOKENS = 323;

// A 1x1 PNG, used for every generated image.
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n';

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Text of a chat/responses `content` (string or array of parts with `text`). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : typeof p === 'string' ? p : ''))
      .join(' ');
  }
  return '';
}

/** Words (or token-array lengths) of a `prompt`/`input` value. */
function inputTokens(input: unknown): number {
  if (typeof input === 'string') return countWords(input);
  if (typeof input === 'number') return 1;
  if (Array.isArray(input)) return input.reduce<number>((n, x) => n + inputTokens(x), 0);
  if (isObj(input)) {
    // Responses API items ({role, content}) and multimodal parts ({type:'text', text}).
    if ('content' in input) return countWords(contentText(input.content));
    if (typeof input.text === 'string') return countWords(input.text);
  }
  return 0;
}

/** The default prompt_tokens for a JSON request body (documented in the file header). */
export function fakePromptTokens(body: Record<string, unknown>): number {
  let n = 0;
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) if (isObj(m)) n += countWords(contentText(m.content));
  }
  if (body.prompt !== undefined) n += inputTokens(body.prompt);
  if (body.input !== undefined) n += inputTokens(body.input);
  if (typeof body.instructions === 'string') n += countWords(body.instructions);
  if (typeof body.query === 'string') n += countWords(body.query);
  if (Array.isArray(body.documents)) n += inputTokens(body.documents.map((d) => (isObj(d) ? d.text : d)));
  return n;
}

/** Splits text into word chunks that keep their leading whitespace: "Hello from x" -> ["Hello", " from", " x"]. */
export function fakeChunks(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** Deterministic embedding: values k/256 in [-1, 1), exactly representable as float32. */
export function fakeEmbedding(text: string, dims = 8): number[] {
  let h = 17;
  for (const ch of text) h = (h * 31 + (ch.codePointAt(0) ?? 0)) % 1_000_003;
  return Array.from({ length: dims }, (_, j) => (((h + 37 * j * j + 11 * j) % 512) - 256) / 256);
}

/** Bytes answered by /audio/speech: an ID3 tag followed by the request echoed (stable per request). */
export function fakeSpeechBytes(body: { model?: unknown; voice?: unknown; input?: unknown }): Uint8Array {
  const tag = Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]);
  const payload = Buffer.from(`FAKEAUDIO:${String(body.model)}:${String(body.voice)}:${String(body.input)}`);
  return new Uint8Array(Buffer.concat([tag, payload]));
}

/** Audio duration the fake reports for an uploaded file: 1 second per 1000 bytes. */
export function fakeAudioSeconds(bytes: number): number {
  return bytes / 1000;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function maskKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}` : key;
}

function openaiError(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

/** OpenAI's body for an error status when the rule gave none. */
function defaultErrorBody(status: number, model: string): unknown {
  switch (status) {
    case 400:
      return openaiError('Invalid request.', 'invalid_request_error', null);
    case 401:
      return openaiError(
        'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        'invalid_api_key',
      );
    case 403:
      return openaiError(
        'Country, region, or territory not supported',
        'request_forbidden',
        'unsupported_country_region_territory',
      );
    case 404:
      return openaiError(
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      );
    case 429:
      return openaiError(
        `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.`,
        'requests',
        'rate_limit_exceeded',
      );
    case 503:
      return openaiError('The engine is currently overloaded, please try again later.', 'server_error', null);
    default:
      return openaiError(
        'The server had an error while processing your request. Sorry about that!',
        'server_error',
        null,
      );
  }
}

type Ctx = {
  req: IncomingMessage;
  res: ServerResponse;
  rec: RecordedRequest;
  body: Record<string, unknown>;
  form: FormData | null;
  task: string;
  azure: boolean;
  model: string;
  respond: FakeRespond;
  usageDefaults: FakeUsage | undefined;
  created: number;
  seq: number;
  baseUrl: string;
  azureFilterChunk: boolean;
};

type Usage = Required<Omit<FakeUsage, 'image_tokens'>>;

function makeUsage(ctx: Ctx, prompt: number, completion: number): Usage {
  const o = { ...ctx.usageDefaults, ...ctx.respond.usage };
  const reasoning = o.reasoning_tokens ?? 0;
  const audioOut = o.audio_completion_tokens ?? 0;
  const p = o.prompt_tokens ?? prompt;
  const c = o.completion_tokens ?? completion + reasoning + audioOut;
  return {
    prompt_tokens: p,
    completion_tokens: c,
    total_tokens: o.total_tokens ?? p + c,
    cached_tokens: o.cached_tokens ?? 0,
    reasoning_tokens: reasoning,
    audio_prompt_tokens: o.audio_prompt_tokens ?? 0,
    audio_completion_tokens: audioOut,
  };
}

function chatUsage(u: Usage) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens, audio_tokens: u.audio_prompt_tokens },
    completion_tokens_details: {
      reasoning_tokens: u.reasoning_tokens,
      audio_tokens: u.audio_completion_tokens,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function responsesUsage(u: Usage) {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
    total_tokens: u.total_tokens,
  };
}

function sendJson(ctx: Ctx, status: number, payload: unknown, headers: Record<string, string> = {}) {
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.res.writeHead(status, { 'content-type': 'application/json', ...commonHeaders(ctx), ...headers });
  ctx.res.end(JSON.stringify(payload));
}

function sendRaw(ctx: Ctx, status: number, body: string | Uint8Array, contentType: string) {
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.res.writeHead(status, { 'content-type': contentType, ...commonHeaders(ctx) });
  ctx.res.end(body);
}

function commonHeaders(ctx: Ctx): Record<string, string> {
  const id = `req_fake${ctx.seq}`;
  const base: Record<string, string> = ctx.azure
    ? { 'apim-request-id': id, 'x-request-id': id, 'x-ms-region': 'East US' }
    : { 'x-request-id': id, 'openai-organization': 'org-fake', 'openai-version': '2020-10-01' };
  return { ...base, ...ctx.respond.headers };
}

/** Writes SSE events; honours streamDelayMs and dropAfterChunks. Returns false once the stream is gone. */
function sseWriter(ctx: Ctx) {
  let sent = 0;
  let flushed: Promise<void> = Promise.resolve();
  ctx.res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...commonHeaders(ctx),
  });
  ctx.res.flushHeaders();
  return async (data: unknown, event?: string): Promise<boolean> => {
    if (ctx.res.destroyed) return false;
    if (ctx.respond.dropAfterChunks !== undefined && sent >= ctx.respond.dropAfterChunks) {
      // Let the events already written reach the client, then cut the connection without the chunked terminator.
      await flushed;
      await sleep(10);
      ctx.res.socket?.destroy();
      ctx.res.destroy();
      return false;
    }
    if (sent > 0 && ctx.respond.streamDelayMs) await sleep(ctx.respond.streamDelayMs);
    if (ctx.res.destroyed) return false;
    const line = typeof data === 'string' ? data : JSON.stringify(data);
    let written = true;
    flushed = new Promise<void>((resolve) => {
      written = ctx.res.write(`${event ? `event: ${event}\n` : ''}data: ${line}\n\n`, () => resolve());
    });
    sent++;
    if (!written && ctx.respond.flood)
      await new Promise<void>((resolve) => {
        const done = () => {
          ctx.res.off('drain', done);
          ctx.res.off('close', done);
          resolve();
        };
        ctx.res.on('drain', done);
        ctx.res.on('close', done);
      });
    return true;
  };
}

type Generated =
  | { kind: 'text'; chunks: string[]; finish: 'stop' | 'length' }
  | { kind: 'tool'; id: string; name: string; args: string; fragments: string[] };

function maxTokens(body: Record<string, unknown>): number | undefined {
  const v = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
  return typeof v === 'number' ? v : undefined;
}

/** What the model "says": a tool call (tools + "weather") or text. */
function generate(
  ctx: Ctx,
  lastUserText: string,
  toolName: string | undefined,
  jsonMode: boolean,
): Generated {
  if (toolName && ctx.respond.content === undefined && /weather/i.test(lastUserText)) {
    const city = /\bin\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)/.exec(lastUserText)?.[1] ?? 'Paris';
    const args = JSON.stringify({ location: city });
    const fragments = args.match(/.{1,8}/gs) ?? [];
    return { kind: 'tool', id: `call_fake${ctx.seq}`, name: toolName, args, fragments };
  }
  let text = ctx.respond.content ?? `Hello from ${ctx.model}`;
  if (jsonMode && ctx.respond.content === undefined) text = JSON.stringify({ message: text });
  let chunks = fakeChunks(text);
  const limit = maxTokens(ctx.body);
  let finish: 'stop' | 'length' = 'stop';
  if (limit !== undefined && limit < chunks.length) {
    chunks = chunks.slice(0, limit);
    finish = 'length';
  }
  return { kind: 'text', chunks, finish };
}

function lastUserMessage(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isObj(m) && m.role === 'user') return contentText(m.content);
  }
  return '';
}

function wantsJson(body: Record<string, unknown>): boolean {
  const rf = body.response_format;
  return isObj(rf) && (rf.type === 'json_object' || rf.type === 'json_schema');
}

function wantsUsageChunk(body: Record<string, unknown>): boolean {
  return isObj(body.stream_options) && body.stream_options.include_usage === true;
}

const AZURE_FILTER = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

async function chatCompletions(ctx: Ctx) {
  const { body } = ctx;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const first = tools[0];
  const toolName =
    isObj(first) && isObj(first.function) && typeof first.function.name === 'string'
      ? first.function.name
      : undefined;
  const gen = generate(ctx, lastUserMessage(body.messages), toolName, wantsJson(body));
  const pieces = gen.kind === 'tool' ? gen.fragments.length : gen.chunks.length;
  const usage = makeUsage(ctx, fakePromptTokens(body), pieces);
  const id = `chatcmpl-fake${ctx.seq}`;
  const finish = gen.kind === 'tool' ? 'tool_calls' : gen.finish;
  const base = {
    id,
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: 'fp_fake',
  };

  if (body.stream !== true) {
    const message =
      gen.kind === 'tool'
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: gen.id, type: 'function', function: { name: gen.name, arguments: gen.args } }],
            refusal: null,
            annotations: [],
          }
        : { role: 'assistant', content: gen.chunks.join(''), refusal: null, annotations: [] };
    if (ctx.respond.reasoningContent !== undefined)
      Object.assign(message, { reasoning_content: ctx.respond.reasoningContent });
    sendJson(ctx, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message,
          logprobs: null,
          finish_reason: finish,
          ...(ctx.azure ? { content_filter_results: AZURE_FILTER } : {}),
        },
      ],
      ...(ctx.respond.omitUsage ? {} : { usage: chatUsage(usage) }),
      ...(ctx.azure
        ? { prompt_filter_results: [{ prompt_index: 0, content_filter_results: AZURE_FILTER }] }
        : {}),
      service_tier: 'default',
    });
    return;
  }

  const includeUsage = wantsUsageChunk(body) && !ctx.respond.omitUsage;
  const send = sseWriter(ctx);
  const chunk = (choice: Record<string, unknown>) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }],
    ...(includeUsage ? { usage: null } : {}),
  });
  if (ctx.azure && ctx.azureFilterChunk) {
    const filter = {
      id: '',
      object: '',
      created: 0,
      model: '',
      choices: [],
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: AZURE_FILTER }],
    };
    if (!(await send(filter))) return;
  }
  if (ctx.respond.reasoningContent !== undefined)
    for (const r of fakeChunks(ctx.respond.reasoningContent))
      if (!(await send(chunk({ delta: { role: 'assistant', content: null, reasoning_content: r } })))) return;
  if (gen.kind === 'tool') {
    const head = {
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: gen.id, type: 'function', function: { name: gen.name, arguments: '' } }],
    };
    if (!(await send(chunk({ delta: head })))) return;
    for (const f of gen.fragments) {
      if (!(await send(chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: f } }] } })))) return;
    }
  } else {
    if (!(await send(chunk({ delta: { role: 'assistant', content: '', refusal: null } })))) return;
    const flood = ctx.respond.flood;
    if (flood) {
      const piece = 'hey '.repeat(Math.ceil((flood.chunkBytes ?? 32 * 1024) / 4));
      flood.sent = 0;
      while (flood.sent < flood.bytes) {
        if (!(await send(chunk({ delta: { content: piece } })))) return;
        flood.sent += piece.length;
      }
    } else for (const c of gen.chunks) if (!(await send(chunk({ delta: { content: c } })))) return;
  }
  if (!(await send(chunk({ delta: {}, finish_reason: finish })))) return;
  if (includeUsage) {
    const last = { ...base, object: 'chat.completion.chunk', choices: [], usage: chatUsage(usage) };
    if (!(await send(last))) return;
  }
  if (!(await send('[DONE]'))) return;
  ctx.res.end();
}

async function completions(ctx: Ctx) {
  const { body } = ctx;
  const gen = generate(ctx, '', undefined, false);
  if (gen.kind !== 'text') return;
  const usage = makeUsage(ctx, fakePromptTokens(body), gen.chunks.length);
  const base = {
    id: `cmpl-fake${ctx.seq}`,
    object: 'text_completion',
    created: ctx.created,
    model: ctx.model,
  };
  const legacyUsage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
  };
  if (body.stream !== true) {
    sendJson(ctx, 200, {
      ...base,
      choices: [{ text: gen.chunks.join(''), index: 0, logprobs: null, finish_reason: gen.finish }],
      ...(ctx.respond.omitUsage ? {} : { usage: legacyUsage }),
    });
    return;
  }
  const includeUsage = wantsUsageChunk(body) && !ctx.respond.omitUsage;
  const send = sseWriter(ctx);
  const chunk = (text: string, finish: string | null) => ({
    ...base,
    choices: [{ text, index: 0, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  for (const c of gen.chunks) if (!(await send(chunk(c, null)))) return;
  if (!(await send(chunk('', gen.finish)))) return;
  if (includeUsage && !(await send({ ...base, choices: [], usage: legacyUsage }))) return;
  if (!(await send('[DONE]'))) return;
  ctx.res.end();
}

function embeddings(ctx: Ctx) {
  const { body } = ctx;
  const raw = body.input;
  const inputs: unknown[] =
    Array.isArray(raw) && raw.length > 0 && typeof raw[0] !== 'number' ? raw : raw === undefined ? [] : [raw];
  const dims = typeof body.dimensions === 'number' ? body.dimensions : 8;
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const text = Array.isArray(input) ? input.join(',') : String(input);
    const vec = fakeEmbedding(text, dims);
    const embedding = base64 ? Buffer.from(new Float32Array(vec).buffer).toString('base64') : vec;
    return { object: 'embedding', index, embedding };
  });
  const usage = makeUsage(ctx, fakePromptTokens(body), 0);
  sendJson(ctx, 200, {
    object: 'list',
    data,
    model: ctx.model,
    ...(ctx.respond.omitUsage
      ? {}
      : { usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens } }),
  });
}

function images(ctx: Ctx) {
  const { body } = ctx;
  imageReply(ctx, {
    n: typeof body.n === 'number' ? body.n : 1,
    prompt: String(body.prompt ?? ''),
    responseFormat: body.response_format,
    promptTokens: fakePromptTokens(body),
    imageTokens: 0,
  });
}

/** POST /images/edits (multipart): `image` or `image[]` files, an optional `mask`, `prompt`, `n`, ... */
function imageEdits(ctx: Ctx) {
  const form = ctx.form;
  const images = form
    ? [...form.getAll('image'), ...form.getAll('image[]')].filter((v) => v instanceof Blob)
    : [];
  if (!form || images.length === 0) {
    sendJson(
      ctx,
      400,
      openaiError(
        "Missing required parameter: 'image'.",
        'invalid_request_error',
        'missing_required_parameter',
        'image',
      ),
    );
    return;
  }
  const prompt = form.get('prompt');
  if (typeof prompt !== 'string' || !prompt) {
    sendJson(
      ctx,
      400,
      openaiError(
        "Missing required parameter: 'prompt'.",
        'invalid_request_error',
        'missing_required_parameter',
        'prompt',
      ),
    );
    return;
  }
  const mask = form.get('mask') instanceof Blob ? 1 : 0;
  const imageTokens = FAKE_IMAGE_INPUT_TOKENS * (images.length + mask);
  imageReply(ctx, {
    n: Number(form.get('n') ?? 1) || 1,
    prompt,
    responseFormat: form.get('response_format'),
    promptTokens: countWords(prompt) + imageTokens,
    imageTokens,
  });
}

function imageReply(
  ctx: Ctx,
  req: { n: number; prompt: string; responseFormat: unknown; promptTokens: number; imageTokens: number },
) {
  const { n } = req;
  const body = { prompt: req.prompt, response_format: req.responseFormat };
  const gptImage = ctx.model.startsWith('gpt-image');
  // gpt-image models always answer base64; dall-e defaults to url.
  const b64 = gptImage || body.response_format === 'b64_json';
  const data = Array.from({ length: n }, (_, i) =>
    b64
      ? {
          b64_json: PNG_1X1.toString('base64'),
          ...(gptImage ? {} : { revised_prompt: String(body.prompt ?? '') }),
        }
      : { url: `${ctx.baseUrl}/fake-images/${ctx.seq}-${i}.png`, revised_prompt: String(body.prompt ?? '') },
  );
  const u = makeUsage(ctx, req.promptTokens, 0);
  // gpt-image models report token usage; output tokens default to 100 per image.
  const out = ctx.respond.usage?.completion_tokens ?? 100 * n;
  const imageTokens = Math.min(ctx.respond.usage?.image_tokens ?? req.imageTokens, u.prompt_tokens);
  const usage = {
    input_tokens: u.prompt_tokens,
    output_tokens: out,
    total_tokens: u.prompt_tokens + out,
    input_tokens_details: { text_tokens: u.prompt_tokens - imageTokens, image_tokens: imageTokens },
  };
  sendJson(ctx, 200, {
    created: ctx.created,
    data,
    ...(gptImage && !ctx.respond.omitUsage ? { usage } : {}),
  });
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

function speech(ctx: Ctx) {
  const format = typeof ctx.body.response_format === 'string' ? ctx.body.response_format : 'mp3';
  const bytes = fakeSpeechBytes({ ...ctx.body, model: ctx.model });
  if (ctx.res.headersSent) return;
  ctx.res.writeHead(200, {
    'content-type': SPEECH_TYPES[format] ?? 'audio/mpeg',
    'content-length': String(bytes.byteLength),
    ...commonHeaders(ctx),
  });
  ctx.res.end(bytes);
}

function timestamp(seconds: number, sep: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
}

function audioText(ctx: Ctx, translate: boolean) {
  const form = ctx.form;
  const file = form?.get('file');
  if (!form || !(file instanceof Blob)) {
    sendJson(
      ctx,
      400,
      openaiError(
        "Missing required parameter: 'file'.",
        'invalid_request_error',
        'missing_required_parameter',
        'file',
      ),
    );
    return;
  }
  const seconds = fakeAudioSeconds(file.size);
  const text = ctx.respond.content ?? `Hello from ${ctx.model}`;
  const format = String(form.get('response_format') ?? 'json');
  const tokenModel = !ctx.model.startsWith('whisper');
  const prompt = String(form.get('prompt') ?? '');
  // Token-billed models (gpt-4o-transcribe): 10 audio tokens per second + prompt words in; text words out.
  const audioTokens = Math.ceil(seconds * 10);
  const u = makeUsage(ctx, audioTokens + countWords(prompt), countWords(text));
  const usage = translate
    ? undefined
    : tokenModel
      ? {
          type: 'tokens',
          input_tokens: u.prompt_tokens,
          input_token_details: { text_tokens: u.prompt_tokens - audioTokens, audio_tokens: audioTokens },
          output_tokens: u.completion_tokens,
          total_tokens: u.total_tokens,
        }
      : { type: 'duration', seconds: Math.ceil(seconds) };
  const withUsage = usage && !ctx.respond.omitUsage ? { usage } : {};
  switch (format) {
    case 'text':
      sendRaw(ctx, 200, `${text}\n`, 'text/plain; charset=utf-8');
      return;
    case 'srt':
      sendRaw(
        ctx,
        200,
        `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n`,
        'text/plain; charset=utf-8',
      );
      return;
    case 'vtt':
      sendRaw(
        ctx,
        200,
        `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n`,
        'text/plain; charset=utf-8',
      );
      return;
    case 'verbose_json':
      sendJson(ctx, 200, {
        task: translate ? 'translate' : 'transcribe',
        language: translate ? 'english' : String(form.get('language') ?? 'english'),
        duration: seconds,
        text,
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0,
            end: seconds,
            text,
            tokens: fakeChunks(text).map((_, i) => 50_364 + i),
            temperature: 0,
            avg_logprob: -0.25,
            compression_ratio: 1,
            no_speech_prob: 0,
          },
        ],
        ...withUsage,
      });
      return;
    default:
      sendJson(ctx, 200, { text, ...withUsage });
  }
}

const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

function moderations(ctx: Ctx) {
  const raw = ctx.body.input;
  // Multimodal input is one item; a string array is one result per string.
  const items: string[] =
    Array.isArray(raw) && raw.every((x) => typeof x === 'string')
      ? raw
      : [Array.isArray(raw) ? contentText(raw) : String(raw ?? '')];
  const results = items.map((text) => {
    // Deterministic: "kill" / "violence" flags violence, "hate" flags hate.
    const hits = new Set<string>();
    if (/\b(kill|violence|violent)\b/i.test(text)) hits.add('violence');
    if (/\bhate\b/i.test(text)) hits.add('hate');
    const categories = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, hits.has(c)]));
    const scores = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, hits.has(c) ? 0.9 : 0.0001]));
    const types = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, ['text']]));
    return {
      flagged: hits.size > 0,
      categories,
      category_scores: scores,
      category_applied_input_types: types,
    };
  });
  sendJson(ctx, 200, { id: `modr-fake${ctx.seq}`, model: ctx.model, results });
}

function rerank(ctx: Ctx) {
  const { body } = ctx;
  const query = String(body.query ?? '');
  const docs = Array.isArray(body.documents) ? body.documents : [];
  const qWords = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  // Score = share of query words present in the document, with a small index tie-break so order is stable.
  const scored = docs.map((d, index) => {
    const text = isObj(d) ? String(d.text ?? '') : String(d);
    const words = new Set(text.toLowerCase().split(/\W+/).filter(Boolean));
    const hits = [...qWords].filter((w) => words.has(w)).length;
    const score = qWords.size ? hits / qWords.size : 0;
    return { index, relevance_score: Math.round((score * 0.9 + 0.05 - index * 0.001) * 1e6) / 1e6, text };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = typeof body.top_n === 'number' ? body.top_n : scored.length;
  const results = scored.slice(0, topN).map(({ index, relevance_score, text }) => ({
    index,
    relevance_score,
    ...(body.return_documents ? { document: { text } } : {}),
  }));
  const u = makeUsage(ctx, fakePromptTokens(body), 0);
  sendJson(ctx, 200, {
    id: `rerank-fake${ctx.seq}`,
    model: ctx.model,
    results,
    ...(ctx.respond.omitUsage
      ? {}
      : {
          usage: { total_tokens: u.prompt_tokens, prompt_tokens: u.prompt_tokens },
          meta: { billed_units: { search_units: 1 } },
        }),
  });
}

async function responses(ctx: Ctx) {
  const { body } = ctx;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const fn = tools.find((t) => isObj(t) && t.type === 'function' && typeof t.name === 'string');
  const input = body.input;
  const lastUser = typeof input === 'string' ? input : lastUserMessage(input);
  const gen = generate(ctx, lastUser, isObj(fn) ? String(fn.name) : undefined, false);
  const pieces = gen.kind === 'tool' ? gen.fragments.length : gen.chunks.length;
  const usage = makeUsage(ctx, fakePromptTokens(body), pieces);
  const respId = `resp_fake${ctx.seq}`;
  const itemId = gen.kind === 'tool' ? `fc_fake${ctx.seq}` : `msg_fake${ctx.seq}`;
  const text = gen.kind === 'text' ? gen.chunks.join('') : '';
  const incomplete = gen.kind === 'text' && gen.finish === 'length';
  const doneItem =
    gen.kind === 'tool'
      ? {
          type: 'function_call',
          id: itemId,
          call_id: gen.id,
          name: gen.name,
          arguments: gen.args,
          status: 'completed',
        }
      : {
          type: 'message',
          id: itemId,
          status: incomplete ? 'incomplete' : 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
        };
  const response = (status: string, output: unknown[], withUsage: boolean) => ({
    id: respId,
    object: 'response',
    created_at: ctx.created,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: ctx.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: withUsage && !ctx.respond.omitUsage ? responsesUsage(usage) : null,
    user: null,
    metadata: body.metadata ?? {},
  });
  const finalStatus = incomplete ? 'incomplete' : 'completed';
  if (body.stream !== true) {
    sendJson(ctx, 200, response(finalStatus, [doneItem], true));
    return;
  }
  const write = sseWriter(ctx);
  let seq = 0;
  const send = (type: string, fields: Record<string, unknown>) =>
    write({ type, sequence_number: seq++, ...fields }, type);
  if (!(await send('response.created', { response: response('in_progress', [], false) }))) return;
  if (!(await send('response.in_progress', { response: response('in_progress', [], false) }))) return;
  if (gen.kind === 'tool') {
    const item = { ...doneItem, arguments: '', status: 'in_progress' };
    if (!(await send('response.output_item.added', { output_index: 0, item }))) return;
    for (const delta of gen.fragments) {
      const ev = { item_id: itemId, output_index: 0, delta };
      if (!(await send('response.function_call_arguments.delta', ev))) return;
    }
    const done = { item_id: itemId, output_index: 0, arguments: gen.args };
    if (!(await send('response.function_call_arguments.done', done))) return;
  } else {
    const item = { type: 'message', id: itemId, status: 'in_progress', role: 'assistant', content: [] };
    if (!(await send('response.output_item.added', { output_index: 0, item }))) return;
    const part = { item_id: itemId, output_index: 0, content_index: 0 };
    const emptyPart = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    if (!(await send('response.content_part.added', { ...part, part: emptyPart }))) return;
    for (const delta of gen.chunks) {
      if (!(await send('response.output_text.delta', { ...part, delta, logprobs: [] }))) return;
    }
    if (!(await send('response.output_text.done', { ...part, text, logprobs: [] }))) return;
    const fullPart = { type: 'output_text', text, annotations: [], logprobs: [] };
    if (!(await send('response.content_part.done', { ...part, part: fullPart }))) return;
  }
  if (!(await send('response.output_item.done', { output_index: 0, item: doneItem }))) return;
  const finalType = incomplete ? 'response.incomplete' : 'response.completed';
  if (!(await send(finalType, { response: response(finalStatus, [doneItem], true) }))) return;
  ctx.res.end();
}

function listModels(ctx: Ctx, models: string[]) {
  sendJson(ctx, 200, {
    object: 'list',
    data: models.map((id) => ({
      id,
      object: 'model',
      created: ctx.created,
      owned_by: id.startsWith('gpt') || id.startsWith('o') ? 'system' : 'openai',
    })),
  });
}

function billingRoute(ctx: Ctx, which: 'subscription' | 'usage', billing: FakeBilling) {
  if (which === 'subscription') {
    sendJson(ctx, 200, {
      object: 'billing_subscription',
      has_payment_method: billing.hasPaymentMethod,
      canceled: false,
      canceled_at: null,
      delinquent: null,
      access_until: billing.accessUntil,
      soft_limit: Math.round(billing.softLimitUsd * 100),
      hard_limit: Math.round(billing.hardLimitUsd * 100),
      system_hard_limit: Math.round(billing.systemHardLimitUsd * 100),
      soft_limit_usd: billing.softLimitUsd,
      hard_limit_usd: billing.hardLimitUsd,
      system_hard_limit_usd: billing.systemHardLimitUsd,
      plan: { title: 'Pay-as-you-go', id: 'payg' },
      account_name: 'Fake Org',
      po_number: null,
      billing_email: null,
      tax_ids: null,
      billing_address: null,
      business_address: null,
    });
    return;
  }
  sendJson(ctx, 200, { object: 'list', daily_costs: [], total_usage: billing.totalUsageCents });
}

function matches(pattern: string | RegExp | undefined, ...values: (string | undefined)[]): boolean {
  if (pattern === undefined) return true;
  return values.some((v) =>
    v === undefined ? false : typeof pattern === 'string' ? v === pattern : pattern.test(v),
  );
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  let rules: FakeRule[] = [];
  const billing: FakeBilling = { ...DEFAULT_BILLING, ...opts.billing };
  const created = opts.created ?? 1_700_000_000;
  let seq = 0;
  let baseUrl = '';

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    const raw = await readBody(req);
    const contentType = headers['content-type'] ?? '';
    let body: Record<string, unknown> | null = null;
    let form: FormData | null = null;
    let badJson = false;
    if (contentType.startsWith('multipart/form-data')) {
      try {
        form = await new Request(url, {
          method: 'POST',
          headers: { 'content-type': contentType },
          body: new Uint8Array(raw),
        }).formData();
      } catch {
        form = null;
      }
    } else if (raw.length > 0) {
      try {
        const parsed: unknown = JSON.parse(raw.toString('utf8'));
        body = isObj(parsed) ? parsed : null;
        badJson = body === null;
      } catch {
        badJson = true;
      }
    }

    const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim() ?? null;
    const apiKeyHeader = headers['api-key'] ?? null;
    const azureMatch = /^\/openai(?:\/deployments\/([^/]+))?(\/.*)$/.exec(path);
    const azure = azureMatch !== null;
    const key = azure ? (apiKeyHeader ?? bearer) : bearer;
    const deployment = azureMatch?.[1] !== undefined ? decodeURIComponent(azureMatch[1]) : undefined;

    const rec: RecordedRequest = {
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      api: azure ? 'azure' : 'openai',
      key,
      time: Date.now(),
    };
    if (deployment !== undefined) rec.deployment = deployment;
    if (form) {
      rec.fields = [];
      rec.form = {};
      rec.files = [];
      for (const [name, value] of form.entries()) {
        rec.fields.push(name);
        if (typeof value === 'string') rec.form[name] = value;
        else rec.files.push({ field: name, name: value.name, size: value.size, type: value.type });
      }
    }
    requests.push(rec);
    seq++;

    // Task path shared by both APIs: /v1/chat/completions and /openai/deployments/x/chat/completions -> /chat/completions.
    let task = '';
    if (azure) task = azureMatch?.[2] ?? '';
    else if (path.startsWith('/v1/')) task = path.slice(3);
    else if (path.startsWith('/dashboard/')) task = path;

    const fields: Record<string, unknown> = body ?? {};
    const formModel = form?.get('model');
    const requestModel =
      typeof fields.model === 'string' ? fields.model : typeof formModel === 'string' ? formModel : undefined;
    const mapped = deployment !== undefined ? opts.deployments?.[deployment] : undefined;
    const model = mapped ?? requestModel ?? deployment ?? DEFAULT_MODEL[task] ?? '';

    const ctx: Ctx = {
      req,
      res,
      rec,
      body: fields,
      form,
      task,
      azure,
      model,
      respond: {},
      usageDefaults: opts.usage,
      created,
      seq,
      baseUrl,
      azureFilterChunk: opts.azurePromptFilterChunk ?? true,
    };

    // Routing: which handler, or 404 in each API's shape.
    const post = method === 'POST';
    type Route = () => void | Promise<void>;
    let route: Route | undefined;
    if (task === '/models' && method === 'GET') route = () => listModels(ctx, opts.models ?? DEFAULT_MODELS);
    else if (/^\/(v1\/)?dashboard\/billing\/subscription$/.test(path) && method === 'GET')
      route = () => billingRoute(ctx, 'subscription', billing);
    else if (/^\/(v1\/)?dashboard\/billing\/usage$/.test(path) && method === 'GET')
      route = () => billingRoute(ctx, 'usage', billing);
    else if (post && task === '/chat/completions') route = () => chatCompletions(ctx);
    else if (post && task === '/completions') route = () => completions(ctx);
    else if (post && task === '/embeddings') route = () => embeddings(ctx);
    else if (post && task === '/images/generations') route = () => images(ctx);
    else if (post && task === '/images/edits') route = () => imageEdits(ctx);
    else if (post && task === '/audio/speech') route = () => speech(ctx);
    else if (post && task === '/audio/transcriptions') route = () => audioText(ctx, false);
    else if (post && task === '/audio/translations') route = () => audioText(ctx, true);
    else if (post && task === '/moderations') route = () => moderations(ctx);
    else if (post && task === '/rerank') route = () => rerank(ctx);
    else if (post && task === '/responses') route = () => responses(ctx);
    else if (method === 'GET' && path.startsWith('/fake-images/')) {
      sendRaw(ctx, 200, PNG_1X1, 'image/png');
      return;
    }
    // Azure only serves model-scoped tasks under /deployments/<name>/.
    if (azure && route && deployment !== undefined && !AZURE_DEPLOYMENT_TASKS.has(task)) route = undefined;
    if (azure && route && deployment === undefined && !['/models', '/responses'].includes(task))
      route = undefined;

    if (!route) {
      if (azure) sendJson(ctx, 404, { error: { code: '404', message: 'Resource not found' } });
      else sendJson(ctx, 404, openaiError(`Invalid URL (${method} ${path})`, 'invalid_request_error', null));
      return;
    }

    // Auth.
    if (azure) {
      if (!url.searchParams.get('api-version')) {
        sendJson(ctx, 404, { error: { code: '404', message: 'Resource not found' } });
        return;
      }
      if (!key || opts.rejectKeys?.includes(key) || (opts.keys && !opts.keys.includes(key))) {
        sendJson(ctx, 401, {
          error: {
            code: '401',
            message:
              'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
          },
        });
        return;
      }
      if (deployment !== undefined && opts.deployments && !(deployment in opts.deployments)) {
        sendJson(ctx, 404, {
          error: {
            code: 'DeploymentNotFound',
            message:
              'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
          },
        });
        return;
      }
    } else if (!key) {
      sendJson(
        ctx,
        401,
        openaiError(
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (i.e. username: YOUR_KEY) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
          'invalid_request_error',
          'invalid_api_key',
        ),
      );
      return;
    } else if (opts.rejectKeys?.includes(key) || (opts.keys && !opts.keys.includes(key))) {
      sendJson(
        ctx,
        401,
        openaiError(
          `Incorrect API key provided: ${maskKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          'invalid_request_error',
          'invalid_api_key',
        ),
      );
      return;
    }

    if (badJson) {
      sendJson(
        ctx,
        400,
        openaiError(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
          'invalid_request_error',
          null,
        ),
      );
      return;
    }
    if (!azure && NEEDS_MODEL.has(task) && !requestModel) {
      sendJson(ctx, 400, openaiError('you must provide a model parameter', 'invalid_request_error', null));
      return;
    }
    if (!azure && opts.models && NEEDS_MODEL.has(task) && !opts.models.includes(model)) {
      sendJson(ctx, 404, defaultErrorBody(404, model));
      return;
    }

    // Rules: first added, first matched; `times` counts down and the rule expires at 0.
    const rule = rules.find(
      (r) =>
        (typeof r.path === 'string' ? r.path === path || r.path === task : matches(r.path, path)) &&
        matches(r.model, model, requestModel, deployment) &&
        (r.key === undefined || r.key === key),
    );
    if (rule) {
      if (rule.times !== undefined) {
        rule.times--;
        if (rule.times <= 0) rules = rules.filter((r) => r !== rule);
      }
      ctx.respond = rule.respond;
    }
    const r = ctx.respond;
    if (r.delayMs) await sleep(r.delayMs);
    if (r.dropAfterChunks === 0 || (r.dropAfterChunks !== undefined && fields.stream !== true)) {
      res.socket?.destroy();
      return;
    }
    if (r.body !== undefined) {
      const type =
        r.headers?.['content-type'] ?? (r.body.trimStart().startsWith('<') ? 'text/html' : 'text/plain');
      sendRaw(ctx, r.status ?? 200, r.body, type);
      return;
    }
    if ((r.status !== undefined && r.status >= 400) || r.error) {
      const status = r.status ?? (r.error?.type === 'insufficient_quota' ? 429 : 400);
      if (status === 502 && !r.error) {
        sendRaw(ctx, 502, HTML_502, 'text/html');
        return;
      }
      const errorBody = r.error
        ? openaiError(r.error.message, r.error.type, r.error.code ?? null, r.error.param ?? null)
        : defaultErrorBody(status, model);
      const extra: Record<string, string> =
        status === 429 && !r.headers?.['retry-after'] && r.error?.type !== 'insufficient_quota'
          ? { 'retry-after': '1' }
          : {};
      sendJson(ctx, status, errorBody, extra);
      return;
    }
    await route();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(openaiError(`fake upstream crashed: ${String(err)}`, 'server_error', null)));
      } else res.destroy();
    });
  });
  // Client hang-ups mid-stream are expected in tests; they must not crash the process.
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    requests,
    billing,
    on(rule) {
      rules.push({ ...rule });
    },
    reset() {
      rules = [];
      requests.length = 0;
      Object.assign(billing, DEFAULT_BILLING, opts.billing);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive sockets from fetch would hold close() open.
        server.closeAllConnections?.();
      }),
  };
}
