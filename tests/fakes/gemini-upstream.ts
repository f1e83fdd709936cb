/**
 * A fake of the Gemini API (https://ai.google.dev/api) for relay tests, speaking the wire format the official
 * `@google/genai` SDK parses: `/{v1|v1beta}/models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse`:
 * `data: {...}\r\n\r\n` events as Google frames them; without it a JSON array), `:countTokens`, `:embedContent`,
 * `:batchEmbedContents`, `GET /{version}/models` (pageSize/pageToken) and `GET /{version}/models/{model}`; the key
 * as `x-goog-api-key` or `?key=`; Google's `{"error":{"code","message","status","details"}}` envelope (a wrong key
 * is 400 INVALID_ARGUMENT with reason API_KEY_INVALID, a missing one 403 PERMISSION_DENIED).
 *
 * Like the real API it rejects unknown request fields and JSON-schema keywords the function-declaration Schema
 * lacks (`additionalProperties`, `$schema`, ...) with 400 "Invalid JSON payload received. Unknown name ...", and
 * roles other than user/model.
 *
 * Deterministic: the answer is "Hello from <model>" in one text part per word; with tools and a last user text
 * mentioning "weather" it answers a functionCall of the first declared function with {"location": "<city after
 * 'in'>"}; with generationConfig.thinkingConfig.includeThoughts a thought part "Let me think." comes first.
 * usageMetadata: promptTokenCount = words of contents + systemInstruction, candidatesTokenCount = text parts (or 1
 * per function call), thoughtsTokenCount = 3 when thinking (reported apart from candidates, as Google does);
 * rules override any of it. Streams repeat the cumulative usageMetadata on every event. generationConfig:
 * maxOutputTokens below the number of text parts truncates the answer with finishReason MAX_TOKENS;
 * responseMimeType application/json wraps the text as {"message": text}.
 *
 * Rules (`on`) may override content, usage, finish reason, block the prompt, answer errors or raw bodies, delay,
 * cut the stream or end it with an error event; the first matching rule wins and `times` counts it down. Rules
 * apply after auth, so a wrong key always gets 400 API_KEY_INVALID.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type GeminiUsageMetadata = {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
};

export type GeminiRule = {
  /** Matches the model of the URL (without `models/`). */
  model?: string | RegExp;
  /** Matches the method after the colon: generateContent, streamGenerateContent, countTokens, ... */
  method?: string;
  /** Matches the key the request carried (header or ?key=). */
  key?: string;
  respond: {
    usage?: GeminiUsageMetadata;
    /** Replaces the generated text. */
    content?: string;
    /** Replaces STOP on the last candidate (MAX_TOKENS, SAFETY, ...). */
    finishReason?: string;
    /** Blocks the prompt: no candidates, promptFeedback.blockReason (SAFETY, PROHIBITED_CONTENT, ...). */
    blockReason?: string;
    /** HTTP status; >= 400 answers with Google's error envelope (status INTERNAL unless `error`). */
    status?: number;
    /** Google error status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) and message; reason goes into ErrorInfo. */
    error?: { status: string; message: string; reason?: string };
    /** Raw response body (e.g. an HTML error page), sent as-is with `status` (default 200). */
    body?: string;
    headers?: Record<string, string>;
    /** Wait before answering. */
    delayMs?: number;
    /** Wait between stream events. */
    streamDelayMs?: number;
    /** Never report usageMetadata. */
    omitUsage?: boolean;
    /** Destroy the socket after this many SSE events (0 = before any response, also for unary calls). */
    dropAfterChunks?: number;
    /** After this many SSE events, send a `{"error":…}` event (UNAVAILABLE) and end the stream. */
    streamErrorAfter?: number;
  };
  times?: number;
};

export type GeminiRequest = {
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
};

export type FakeGemini = {
  url: string;
  requests: GeminiRequest[];
  on(rule: GeminiRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const FAKE_GEMINI_MODELS = [
  'gemini-2.5-flash',
  'gemini-2.5-pro',
  'gemini-2.0-flash',
  'text-embedding-004',
];

const REQUEST_FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'safetySettings',
  'generationConfig',
  'cachedContent',
  'labels',
]);
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

const STATUS_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

function words(v: unknown): number {
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean).length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + words(x), 0);
  if (isObject(v)) return words(v.text) + words(v.parts) + words(v.contents);
  return 0;
}

function lastUserText(contents: unknown): string {
  const list = Array.isArray(contents) ? contents : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const c = list[i];
    if (!isObject(c) || (c.role !== undefined && c.role !== 'user')) continue;
    const parts = Array.isArray(c.parts) ? c.parts : [];
    const text = parts.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join(' ');
    if (text.trim()) return text;
  }
  return '';
}

/** The first schema keyword Gemini's Schema lacks, as Google names its place, or null. */
function badSchemaField(schema: unknown, at: string): string | null {
  if (!isObject(schema)) return null;
  for (const [k, v] of Object.entries(schema)) {
    if (!SCHEMA_FIELDS.has(k)) return `Unknown name "${k}" at '${at}'`;
    if (k === 'properties' && isObject(v)) {
      for (const [name, s] of Object.entries(v)) {
        const bad = badSchemaField(s, `${at}.properties[${name}].value`);
        if (bad) return bad;
      }
    } else if (k === 'items') {
      const bad = badSchemaField(v, `${at}.items`);
      if (bad) return bad;
    }
  }
  return null;
}

/** Why Google would refuse this GenerateContentRequest, or null. */
function invalidRequest(body: Obj | null): string | null {
  if (!body) return 'Invalid JSON payload received.';
  for (const k of Object.keys(body))
    if (!REQUEST_FIELDS.has(k))
      return `Invalid JSON payload received. Unknown name "${k}": Cannot find field.`;
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return '* GenerateContentRequest.contents: contents is not specified';
  for (const c of body.contents) {
    if (!isObject(c) || (c.role !== undefined && c.role !== 'user' && c.role !== 'model'))
      return 'Please use a valid role: user, model.';
    if (!Array.isArray(c.parts) || c.parts.length === 0)
      return '* GenerateContentRequest.contents.parts: contents.parts must not be empty.';
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const [ti, t] of tools.entries()) {
    const decls = isObject(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : [];
    for (const [di, d] of decls.entries()) {
      if (!isObject(d)) continue;
      const bad = badSchemaField(d.parameters, `tools[${ti}].function_declarations[${di}].parameters`);
      if (bad) return `Invalid JSON payload received. ${bad}: Cannot find field.`;
      const p = isObject(d.parameters) ? d.parameters : null;
      if (p?.type === 'object' && (!isObject(p.properties) || Object.keys(p.properties).length === 0))
        return `* GenerateContentRequest.tools[${ti}].function_declarations[${di}].parameters.properties: should be non-empty for OBJECT type`;
    }
  }
  return null;
}

/** A deterministic unit vector-ish embedding of a text. */
function embed(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => ((text.length + i * 7) % 10) / 10);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

export async function startFakeGemini(opts: { keys?: string[] } = {}): Promise<FakeGemini> {
  const requests: GeminiRequest[] = [];
  let rules: GeminiRule[] = [];
  let seq = 0;

  const sendJson = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: ServerResponse, status: string, message: string, reason?: string) =>
    sendJson(res, STATUS_CODE[status] ?? 500, {
      error: {
        code: STATUS_CODE[status] ?? 500,
        message,
        status,
        ...(reason
          ? {
              details: [
                { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' },
              ],
            }
          : {}),
      },
    });

  const modelInfo = (id: string, version: string) => ({
    name: `models/${id}`,
    version,
    displayName: id,
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: id.includes('embedding')
      ? ['embedContent', 'batchEmbedContents']
      : ['generateContent', 'countTokens'],
  });

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    let body: Obj | null = null;
    try {
      body = text ? (JSON.parse(text) as Obj) : null;
    } catch {
      body = null;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    requests.push({ method: req.method ?? 'GET', path: url.pathname, search: url.search, headers, body });

    const key = headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (!key)
      return sendError(
        res,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    if (opts.keys && !opts.keys.includes(key))
      return sendError(
        res,
        'INVALID_ARGUMENT',
        'API key not valid. Please pass a valid API key.',
        'API_KEY_INVALID',
      );

    const m = /^\/(v1|v1beta)\/models(?:\/([^/:]+)(?::(\w+))?)?$/.exec(url.pathname);
    if (!m) return sendError(res, 'NOT_FOUND', `Requested entity was not found: ${url.pathname}`);
    const [, version, rawModel, method] = m;
    const model = rawModel ? decodeURIComponent(rawModel) : undefined;

    if (req.method === 'GET' && !model) {
      const size = Math.max(1, Math.min(1000, Number(url.searchParams.get('pageSize')) || 50));
      const start = Number(url.searchParams.get('pageToken')) || 0;
      const page = FAKE_GEMINI_MODELS.slice(start, start + size).map((id) => modelInfo(id, version!));
      const next = start + size < FAKE_GEMINI_MODELS.length ? { nextPageToken: String(start + size) } : {};
      return sendJson(res, 200, { models: page, ...next });
    }
    if (req.method === 'GET' && model && !method) {
      if (!FAKE_GEMINI_MODELS.includes(model))
        return sendError(res, 'NOT_FOUND', `models/${model} is not found`);
      return sendJson(res, 200, modelInfo(model, version!));
    }
    if (req.method !== 'POST' || !model || !method)
      return sendError(res, 'NOT_FOUND', `Requested entity was not found: ${url.pathname}`);

    const ruleIndex = rules.findIndex(
      (r) =>
        (!r.model || (typeof r.model === 'string' ? r.model === model : r.model.test(model))) &&
        (!r.method || r.method === method) &&
        (!r.key || r.key === key),
    );
    const rule = ruleIndex >= 0 ? rules[ruleIndex] : undefined;
    if (rule?.times !== undefined && --rule.times <= 0) rules.splice(ruleIndex, 1);
    const r = rule?.respond ?? {};
    if (r.delayMs) await sleep(r.delayMs);
    if (r.dropAfterChunks === 0) return res.destroy();
    if (r.body !== undefined) {
      res.writeHead(r.status ?? 200, { 'content-type': 'text/html; charset=UTF-8', ...r.headers });
      return res.end(r.body);
    }
    if (r.error || (r.status && r.status >= 400)) {
      const status = r.error?.status ?? 'INTERNAL';
      const code = r.status ?? STATUS_CODE[status] ?? 500;
      return sendJson(res, code, {
        error: {
          code,
          message: r.error?.message ?? 'An internal error has occurred.',
          status,
          ...(r.error?.reason
            ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: r.error.reason }] }
            : {}),
        },
      });
    }

    if (method === 'countTokens') {
      const inner = isObject(body?.generateContentRequest) ? body.generateContentRequest : body;
      const total = words(inner?.contents) + words(inner?.systemInstruction);
      return sendJson(res, 200, {
        totalTokens: total,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }],
      });
    }
    if (method === 'embedContent' || method === 'batchEmbedContents') {
      const reqs =
        method === 'embedContent' ? [body ?? {}] : Array.isArray(body?.requests) ? body.requests : [];
      if (reqs.length === 0)
        return sendError(res, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is empty');
      const out = reqs.map((q) => {
        const o = isObject(q) ? q : {};
        const t =
          isObject(o.content) && Array.isArray(o.content.parts)
            ? o.content.parts.map((p) => (isObject(p) ? String(p.text ?? '') : '')).join(' ')
            : '';
        const dims = typeof o.outputDimensionality === 'number' ? o.outputDimensionality : 8;
        return { values: embed(t, dims) };
      });
      return sendJson(res, 200, method === 'embedContent' ? { embedding: out[0] } : { embeddings: out });
    }
    if (method !== 'generateContent' && method !== 'streamGenerateContent')
      return sendError(res, 'NOT_FOUND', `Method ${method} not found`);
    const invalid = invalidRequest(body);
    if (invalid || !body)
      return sendError(res, 'INVALID_ARGUMENT', invalid ?? 'Invalid JSON payload received.');

    const gen = isObject(body.generationConfig) ? body.generationConfig : {};
    const thinkingCfg = isObject(gen.thinkingConfig) ? gen.thinkingConfig : {};
    const thinking = thinkingCfg.includeThoughts === true && thinkingCfg.thinkingBudget !== 0;
    const userText = lastUserText(body.contents);
    const decls = (Array.isArray(body.tools) ? body.tools : []).flatMap((t) =>
      isObject(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : [],
    );
    const mode =
      isObject(body.toolConfig) && isObject(body.toolConfig.functionCallingConfig)
        ? body.toolConfig.functionCallingConfig.mode
        : 'AUTO';
    const firstTool =
      decls.length > 0 && mode !== 'NONE' && /weather/i.test(userText) ? (decls[0] as Obj) : undefined;
    const city = /\bin\s+([A-Z][\w-]*)/.exec(userText)?.[1] ?? 'Paris';
    let deltas = (r.content ?? `Hello from ${model}`).split(/(?= )/);
    if (gen.responseMimeType === 'application/json') deltas = [JSON.stringify({ message: deltas.join('') })];
    // maxOutputTokens below the answer truncates it (one token per text part), as MAX_TOKENS.
    const limit = typeof gen.maxOutputTokens === 'number' ? gen.maxOutputTokens : Infinity;
    const truncated = !r.content && limit < deltas.length;
    if (truncated) deltas = deltas.slice(0, Math.max(1, limit));
    const responseId = `fakeResp${++seq}`;

    const prompt = r.usage?.promptTokenCount ?? words(body.contents) + words(body.systemInstruction);
    const candidatesTokens = r.usage?.candidatesTokenCount ?? (firstTool ? 1 : deltas.length);
    const thoughts = r.usage?.thoughtsTokenCount ?? (thinking ? 3 : 0);
    const cached = r.usage?.cachedContentTokenCount ?? 0;
    const toolUse = r.usage?.toolUsePromptTokenCount ?? 0;
    const usageAt = (candidates: number) => ({
      promptTokenCount: prompt,
      ...(candidates > 0 ? { candidatesTokenCount: candidates } : {}),
      totalTokenCount: prompt + candidates + thoughts + toolUse,
      ...(cached ? { cachedContentTokenCount: cached } : {}),
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
      ...(toolUse ? { toolUsePromptTokenCount: toolUse } : {}),
      ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    });
    const finishReason = r.finishReason ?? (truncated ? 'MAX_TOKENS' : 'STOP');

    // The events of a streamed answer; the unary answer is the same parts in one candidate.
    const events: { parts: Obj[]; last: boolean; candidates: number }[] = [];
    if (thinking)
      events.push({ parts: [{ text: 'Let me think.', thought: true }], last: false, candidates: 0 });
    if (firstTool)
      events.push({
        parts: [
          {
            functionCall: { name: String(firstTool.name), args: { location: city } },
            thoughtSignature: 'ZmFrZS1zaWduYXR1cmU=',
          },
        ],
        last: true,
        candidates: candidatesTokens,
      });
    else
      for (const [i, d] of deltas.entries())
        events.push({
          parts: [{ text: d }],
          last: i === deltas.length - 1,
          candidates: Math.round((candidatesTokens * (i + 1)) / deltas.length),
        });
    const response = (parts: Obj[], last: boolean, candidates: number): Obj => ({
      ...(r.blockReason
        ? { promptFeedback: { blockReason: r.blockReason } }
        : {
            candidates: [
              {
                content: { parts, role: 'model' },
                ...(last ? { finishReason } : {}),
                index: 0,
              },
            ],
          }),
      ...(r.omitUsage ? {} : { usageMetadata: r.blockReason ? usageAt(0) : usageAt(candidates) }),
      modelVersion: model,
      responseId,
    });
    // A blocked prompt is answered by one response without candidates.
    if (r.blockReason) events.splice(1);
    const extra = r.headers ?? {};

    if (method === 'generateContent')
      return sendJson(
        res,
        200,
        response(
          events.flatMap((e) => e.parts),
          true,
          candidatesTokens,
        ),
        extra,
      );
    if (url.searchParams.get('alt') !== 'sse')
      return sendJson(
        res,
        200,
        events.map((e) => response(e.parts, e.last, e.candidates)),
        extra,
      );
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extra });
    for (const [i, e] of events.entries()) {
      if (r.dropAfterChunks !== undefined && i >= r.dropAfterChunks) return res.destroy();
      if (r.streamErrorAfter !== undefined && i >= r.streamErrorAfter) {
        const error = {
          code: 503,
          message: 'The model is overloaded. Please try again later.',
          status: 'UNAVAILABLE',
        };
        res.write(`data: ${JSON.stringify({ error })}\r\n\r\n`);
        break;
      }
      if (i > 0 && r.streamDelayMs) await sleep(r.streamDelayMs);
      res.write(`data: ${JSON.stringify(response(e.parts, e.last, e.candidates))}\r\n\r\n`);
    }
    res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(rule) {
      rules.push(rule);
    },
    reset() {
      rules = [];
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
