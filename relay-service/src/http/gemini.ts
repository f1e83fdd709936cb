/**
 * The Gemini front: the `@google/genai` SDK (and plain REST clients) call the relay in Google's format at
 * `/v1beta/models/{model}:generateContent`, `:streamGenerateContent` and `:countTokens` (also under `/v1`), and
 * list models at `GET /v1beta/models[/{model}]`. The model comes from the path and is what gets billed. The key
 * comes as `x-goog-api-key` or `?key=`. Gemini channels get the body natively; any other chat channel is reached
 * through the chat bridge. Errors use Google's envelope `{"error":{"code","message","status"}}`.
 *
 * Streaming: with `alt=sse` (what the SDK sends) the answer is Gemini's SSE. Without it Google streams one JSON
 * array of responses; the relay does the same, writing each response as an array element as it arrives.
 */
import type { Context, Hono } from 'hono';
import { RelayError } from '../core/errors.ts';
import { countPromptTokens } from '../core/tokenize.ts';
import { geminiToChat } from '../providers/bridges/gemini-chat.ts';
import { SseDecoder } from '../providers/sse.ts';
import type { ApiFront, FrontError } from './fronts.ts';
import {
  callerAuthenticator,
  checkJsonDepth,
  clientIp,
  modelsForCaller,
  type RelayServices,
} from './openai.ts';
import { checkShape } from './shape.ts';

type Obj = Record<string, unknown>;

/** google.rpc.Code names by HTTP status (https://ai.google.dev/gemini-api/docs/troubleshooting). */
export function googleStatus(status: number): string {
  switch (status) {
    case 400:
    case 413:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
    case 529:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
  }
  return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
}

export function geminiError(
  err: FrontError & { retryAfterMs?: number | undefined; requestId?: string },
): Response {
  const headers = new Headers();
  if (err.retryAfterMs !== undefined)
    headers.set('retry-after', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
  if (err.requestId) headers.set('x-request-id', err.requestId);
  return Response.json(
    { error: { code: err.status, message: err.message, status: googleStatus(err.status) } },
    { status: err.status, headers },
  );
}

const MODEL_ACTION = /^\/(v1beta|v1)\/models\/([^/]+):([A-Za-z]+)$/;

/** Gemini's own paths; `/v1beta/openai/*` is its OpenAI-compatible API, served by the OpenAI front. */
export const isGeminiPath = (pathname: string) =>
  (pathname.startsWith('/v1beta/') && !pathname.startsWith('/v1beta/openai/')) || MODEL_ACTION.test(pathname);

/** A Gemini client: Google's key header or SDK header, or the key in the query without a Bearer token. */
const isGeminiClient = (c: Context) =>
  c.req.header('x-goog-api-key') !== undefined ||
  c.req.header('x-goog-api-client') !== undefined ||
  (c.req.query('key') !== undefined && c.req.header('authorization') === undefined);

const invalid = (message: string) => new RelayError({ status: 400, message, type: 'invalid_request_error' });

/** SSE events (`data: {...}`) → one JSON array streamed element by element, as Google does without alt=sse. */
function sseToJsonArray(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new SseDecoder();
  const encoder = new TextEncoder();
  let count = 0;
  const write = (
    events: ReturnType<SseDecoder['push']>,
    controller: TransformStreamDefaultController<Uint8Array>,
  ) => {
    for (const ev of events) {
      const data = ev.data.trim();
      if (!data || data === '[DONE]') continue;
      controller.enqueue(encoder.encode(`${count++ === 0 ? '[' : ',\r\n'}${data}`));
    }
  };
  return new TransformStream({
    transform(bytes, controller) {
      write(decoder.push(bytes), controller);
    },
    flush(controller) {
      write(decoder.end(), controller);
      controller.enqueue(encoder.encode(count === 0 ? '[]' : ']'));
    },
  });
}

function modelObject(id: string): Obj {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: '001',
    displayName: id,
    description: '',
    supportedGenerationMethods: ['generateContent', 'countTokens'],
  };
}

export function createGeminiFront(services: RelayServices): ApiFront {
  const authenticate = callerAuthenticator(services);

  async function body(c: Context): Promise<Obj> {
    let json: unknown;
    try {
      json = await c.req.raw.json();
    } catch {
      throw invalid('Invalid JSON payload received.');
    }
    if (!json || typeof json !== 'object' || Array.isArray(json))
      throw invalid('Invalid JSON payload received: the body must be a JSON object.');
    checkJsonDepth(json);
    return json as Obj;
  }

  const fail = (err: unknown) => {
    if (err instanceof RelayError) return geminiError({ ...err, message: err.message });
    throw err;
  };

  async function generate(c: Context, model: string, stream: boolean): Promise<Response> {
    const b = await body(c);
    if (!Array.isArray(b.contents) || b.contents.length === 0)
      throw invalid('* GenerateContentRequest.contents: contents is not specified');
    checkShape('generate', b);
    const caller = await authenticate(c, model);
    const result = await services.core.relay({
      endpoint: 'generate',
      model,
      stream,
      body: b,
      caller,
      clientHeaders: c.req.raw.headers,
      clientIp: clientIp(c, services.clientIp),
      signal: c.req.raw.signal,
    });
    if (result.kind !== 'stream' || c.req.query('alt') === 'sse')
      return new Response(result.body, { status: result.status, headers: result.headers });
    const headers = new Headers(result.headers);
    headers.set('content-type', 'application/json; charset=utf-8');
    return new Response(result.body.pipeThrough(sseToJsonArray()), { status: result.status, headers });
  }

  // Answered locally, nothing billed. The body is `{contents}` or `{generateContentRequest: {...}}`.
  async function countTokens(c: Context, model: string): Promise<Response> {
    const b = await body(c);
    await authenticate(c, model);
    const req =
      b.generateContentRequest && typeof b.generateContentRequest === 'object'
        ? (b.generateContentRequest as Obj)
        : b;
    // Counted as the equivalent chat request, so function calls, responses and tools count too.
    const chat = geminiToChat(req, false);
    return c.json({ totalTokens: await countPromptTokens('chat', chat, model) });
  }

  /**
   * `:embedContent` (`{content, taskType?, title?, outputDimensionality?}`) and `:batchEmbedContents`
   * (`{requests: [...]}`): natively on Gemini channels, through the embeddings bridge on OpenAI ones; billed by
   * the input tokens (Gemini reports none, so they are counted here; an OpenAI upstream's usage is used).
   */
  async function embed(c: Context, model: string, batch: boolean): Promise<Response> {
    const b = await body(c);
    const hasContent = (r: unknown): boolean => {
      const content = r && typeof r === 'object' ? (r as Obj).content : null;
      return !!content && typeof content === 'object' && Array.isArray((content as Obj).parts);
    };
    if (batch) {
      if (!Array.isArray(b.requests) || b.requests.length === 0)
        throw invalid('* BatchEmbedContentsRequest.requests: requests is empty');
      if (!b.requests.every(hasContent))
        throw invalid('* BatchEmbedContentsRequest.requests[].content: content is not specified');
    } else if (!hasContent(b)) throw invalid('* EmbedContentRequest.content: content is not specified');
    const caller = await authenticate(c, model);
    const result = await services.core.relay({
      endpoint: 'embed',
      model,
      stream: false,
      // A single call's body never reads as a batch (the adaptor and the bridge tell them apart by `requests`).
      body: batch ? b : Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'requests')),
      caller,
      clientHeaders: c.req.raw.headers,
      clientIp: clientIp(c, services.clientIp),
      signal: c.req.raw.signal,
    });
    return new Response(result.body, { status: result.status, headers: result.headers });
  }

  async function action(c: Context): Promise<Response> {
    try {
      const m = MODEL_ACTION.exec(new URL(c.req.url).pathname);
      if (!m)
        throw new RelayError({ status: 404, message: 'Requested entity was not found.', type: 'not_found' });
      let model: string;
      try {
        model = decodeURIComponent(m[2]!);
      } catch {
        throw invalid('invalid model name in the path');
      }
      switch (m[3]) {
        case 'generateContent':
          return await generate(c, model, false);
        case 'streamGenerateContent':
          return await generate(c, model, true);
        case 'countTokens':
          return await countTokens(c, model);
        case 'embedContent':
          return await embed(c, model, false);
        case 'batchEmbedContents':
          return await embed(c, model, true);
      }
      throw new RelayError({
        status: 501,
        message: `method ${m[3]} is not supported by this gateway`,
        type: 'new_api_error',
        code: 'api_not_implemented',
      });
    } catch (err) {
      return fail(err);
    }
  }

  return {
    name: 'gemini',
    owns: isGeminiPath,
    error: (e) => geminiError(e),
    mount(app: Hono) {
      app.post('/v1beta/models/*', action);
      // The SDK with apiVersion 'v1'; GET /v1/models stays OpenAI's.
      app.post('/v1/models/*', action);

      const list = async (c: Context) => {
        try {
          const ids = modelsForCaller(services, await authenticate(c, null));
          // pageToken is the offset of the next page (opaque to clients).
          const size = Math.min(1000, Math.max(1, Number(c.req.query('pageSize')) || 50));
          const from = Math.max(0, Number(c.req.query('pageToken')) || 0);
          return c.json({
            models: ids.slice(from, from + size).map(modelObject),
            ...(from + size < ids.length ? { nextPageToken: String(from + size) } : {}),
          });
        } catch (err) {
          return fail(err);
        }
      };
      const get = async (c: Context) => {
        try {
          const caller = await authenticate(c, null);
          const id = c.req.param('model') ?? '';
          if (!modelsForCaller(services, caller).includes(id))
            throw new RelayError({ status: 404, message: `models/${id} is not found`, type: 'not_found' });
          return c.json(modelObject(id));
        } catch (err) {
          return fail(err);
        }
      };
      app.get('/v1beta/models', list);
      app.get('/v1beta/models/:model', get);
      // The SDK's default version is v1, where GET /v1/models is also OpenAI's: answer Gemini clients only.
      app.get('/v1/models', (c, next) => (isGeminiClient(c) ? list(c) : next()));
      app.get('/v1/models/:model', (c, next) => (isGeminiClient(c) ? get(c) : next()));
    },
  };
}
