/**
 * A fake of Alibaba Cloud Model Studio's native DashScope API for relay tests:
 * - `POST /api/v1/services/aigc/text-generation/generation` `{model, input: {messages}, parameters}`: with
 *   `parameters.result_format: "message"` the answer is `output.choices[{message, finish_reason}]`, else the
 *   legacy `output.text` / `output.finish_reason`; with the header `X-DashScope-SSE: enable` it streams SSE events
 *   `id:N`, `event:result`, `:HTTP_STATUS/200`, `data:{output, usage, request_id}`, one per word, each holding
 *   only the new text when `parameters.incremental_output` is true and the whole text so far otherwise;
 *   `finish_reason` is "null" until the last event; usage is the running total on every event.
 * - `POST /api/v1/services/embeddings/text-embedding/text-embedding` `{model, input: {texts}, parameters}`:
 *   `output.embeddings[{text_index, embedding}]` (`parameters.dimension` values each, default 4), usage
 *   `total_tokens`.
 * - `POST /api/v1/services/aigc/multimodal-generation/generation` (qwen-vl): the same, with every message content
 *   a list of `{text}` / `{image}` items (a string is refused), answers content as `[{text}]`; each image adds
 *   FAKE_ALI_IMAGE_TOKENS to input_tokens, reported apart as `image_tokens`.
 * The key is `Authorization: Bearer <key>`; a wrong key is 401 `{code: "InvalidApiKey", message, request_id}`,
 * a malformed body 400 `InvalidParameter`, as DashScope answers them.
 *
 * Deterministic: the answer is "Hello from <model>"; with `parameters.tools` and a last user message mentioning
 * "weather" it calls the first tool with {"location": "<word after 'in'>"}. input_tokens = words of all message
 * contents, output_tokens = words of the answer (1 per tool call). Rules (`on`) override content, usage, status
 * and error, or end a stream with an `event:error`; the first matching rule wins and `times` counts it down.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const CHAT_PATH = '/api/v1/services/aigc/text-generation/generation';
export const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding';
export const MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
/** Input tokens per image on the multimodal service (a 512×512 image, as DashScope's docs count it). */
export const FAKE_ALI_IMAGE_TOKENS = 334;

export type AliRule = {
  path?: string;
  model?: string;
  respond: {
    content?: string;
    usage?: { input_tokens: number; output_tokens: number; cached_tokens?: number };
    /** HTTP status; >= 400 answers `{code, message, request_id}`. */
    status?: number;
    error?: { code: string; message: string };
    /** After this many stream events, an `event:error` with `error` (default InternalError) ends the stream. */
    streamErrorAfter?: number;
  };
  times?: number;
};

export type AliRequest = { path: string; headers: Record<string, string>; body: Obj | null };

export type FakeAli = {
  url: string;
  requests: AliRequest[];
  on(rule: AliRule): void;
  reset(): void;
  close(): Promise<void>;
};

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const words = (s: string): string[] => s.split(/\s+/).filter(Boolean);

function messageText(m: unknown): string {
  if (!isObject(m)) return '';
  if (Array.isArray(m.content))
    return m.content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join(' ');
  return typeof m.content === 'string' ? m.content : '';
}

const imagesOf = (m: unknown): number =>
  isObject(m) && Array.isArray(m.content) ? m.content.filter((p) => isObject(p) && 'image' in p).length : 0;

/** Why DashScope would refuse this chat body, or null. */
function invalidChat(body: Obj | null, multimodal: boolean): string | null {
  if (!body) return 'Request body is not valid JSON.';
  if (typeof body.model !== 'string' || !body.model) return 'Model not exist.';
  const input = isObject(body.input) ? body.input : null;
  if (!input || !Array.isArray(input.messages) || input.messages.length === 0)
    return 'Input should be a valid dictionary: messages must not be empty.';
  for (const m of input.messages) {
    if (!isObject(m) || !['system', 'user', 'assistant', 'tool'].includes(String(m.role)))
      return 'Role must be in [user, assistant, system, tool]';
    // The text-generation service takes string content only; the multimodal one item lists (tool results aside).
    if (multimodal && m.role !== 'tool') {
      if (!Array.isArray(m.content) || m.content.some((p) => !isObject(p) || !('text' in p || 'image' in p)))
        return 'Input content must be a list of {text} or {image} items.';
    } else if (typeof m.content !== 'string') return 'Input content must be a string.';
  }
  if (body.parameters !== undefined && !isObject(body.parameters)) return 'parameters must be an object';
  return null;
}

export async function startFakeAli(opts: { keys?: string[] } = {}): Promise<FakeAli> {
  const keys = new Set(opts.keys ?? ['sk-dashscope']);
  const requests: AliRequest[] = [];
  let rules: AliRule[] = [];
  let seq = 0;

  const match = (path: string, model: string): AliRule['respond'] | null => {
    for (const r of rules) {
      if (r.path && r.path !== path) continue;
      if (r.model && r.model !== model) continue;
      if (r.times !== undefined) {
        r.times--;
        if (r.times <= 0) rules = rules.filter((x) => x !== r);
      }
      return r.respond;
    }
    return null;
  };

  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: Obj | null = null;
    try {
      const parsed = JSON.parse(text);
      body = isObject(parsed) ? parsed : null;
    } catch {
      body = null;
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, headers: req.headers as Record<string, string>, body });
    const requestId = `fake-${++seq}-0000-9000-8000-000000000000`;
    const json = (status: number, payload: Obj) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
      res.end(JSON.stringify(payload));
    };
    const fail = (status: number, code: string, message: string) =>
      json(status, { code, message, request_id: requestId });

    if (req.method !== 'POST' || ![CHAT_PATH, EMBEDDINGS_PATH, MULTIMODAL_PATH].includes(path))
      return fail(404, 'NotFound', 'Not Found');
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !keys.has(auth.slice(7)))
      return fail(401, 'InvalidApiKey', 'Invalid API-key provided.');
    const model = typeof body?.model === 'string' ? body.model : '';
    const rule = match(path, model);
    if (rule?.status && rule.status >= 400)
      return fail(rule.status, rule.error?.code ?? 'InternalError', rule.error?.message ?? 'internal error');
    const parameters = isObject(body?.parameters) ? body.parameters : {};

    if (path === EMBEDDINGS_PATH) {
      const input = body && isObject(body.input) ? body.input : null;
      const texts = input && Array.isArray(input.texts) ? input.texts : null;
      if (!model || !texts || texts.length === 0 || texts.some((t) => typeof t !== 'string'))
        return fail(400, 'InvalidParameter', 'input.texts should be a non-empty list of strings');
      const dim = typeof parameters.dimension === 'number' ? parameters.dimension : 4;
      return json(200, {
        output: {
          embeddings: (texts as string[]).map((t, i) => ({
            text_index: i,
            embedding: Array.from({ length: dim }, (_, k) => (t.length + k) / 8),
          })),
        },
        usage: { total_tokens: (texts as string[]).reduce((n, t) => n + words(t).length, 0) },
        request_id: requestId,
      });
    }

    const multimodal = path === MULTIMODAL_PATH;
    const invalid = invalidChat(body, multimodal);
    if (invalid) return fail(400, 'InvalidParameter', invalid);
    const messages = (body!.input as Obj).messages as Obj[];
    const imageTokens = messages.reduce((n, m) => n + imagesOf(m) * FAKE_ALI_IMAGE_TOKENS, 0);
    const inputTokens = messages.reduce((n, m) => n + words(messageText(m)).length, 0) + imageTokens;
    const tools = Array.isArray(parameters.tools) ? parameters.tools : [];
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const userText = lastUser ? messageText(lastUser) : '';
    let toolCall: Obj | null = null;
    if (tools.length > 0 && /weather/i.test(userText)) {
      const first = tools[0];
      const fn = isObject(first) && isObject(first.function) ? first.function : {};
      const city = /\bin\s+([A-Za-z]+)/.exec(userText)?.[1] ?? 'Paris';
      toolCall = {
        index: 0,
        id: `call_${seq}`,
        type: 'function',
        function: { name: String(fn.name ?? ''), arguments: JSON.stringify({ location: city }) },
      };
    }
    const answer = toolCall ? [] : words(rule?.content ?? `Hello from ${model}`);
    const outputTokens = toolCall ? 1 : answer.length;
    const usageAt = (out: number) => {
      const u = rule?.usage;
      const input = u?.input_tokens ?? inputTokens;
      const output = u ? Math.round((u.output_tokens * out) / Math.max(1, outputTokens)) : out;
      return {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
        ...(u?.cached_tokens ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
        ...(multimodal ? { image_tokens: imageTokens } : {}),
      };
    };
    const messageFormat = parameters.result_format === 'message';
    const output = (content: string, finish: string, call: Obj | null): Obj =>
      messageFormat
        ? {
            choices: [
              {
                finish_reason: finish,
                message: {
                  role: 'assistant',
                  content: multimodal ? [{ text: content }] : content,
                  ...(call ? { tool_calls: [call] } : {}),
                },
              },
            ],
          }
        : { text: content, finish_reason: finish };

    if (req.headers['x-dashscope-sse'] !== 'enable') {
      return json(200, {
        output: output(answer.join(' '), toolCall ? 'tool_calls' : 'stop', toolCall),
        usage: usageAt(outputTokens),
        request_id: requestId,
      });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream;charset=UTF-8', 'x-request-id': requestId });
    const incremental = parameters.incremental_output === true;
    const event = (id: number, data: Obj, kind = 'result', status = 200) =>
      res.write(`id:${id}\nevent:${kind}\n:HTTP_STATUS/${status}\ndata:${JSON.stringify(data)}\n\n`);
    const pieces = toolCall ? [''] : answer.map((w, i) => (i === 0 ? w : ` ${w}`));
    let sofar = '';
    for (const [i, piece] of pieces.entries()) {
      if (rule?.streamErrorAfter !== undefined && i === rule.streamErrorAfter) {
        event(
          i + 1,
          {
            code: rule.error?.code ?? 'InternalError',
            message: rule.error?.message ?? 'internal error',
            request_id: requestId,
          },
          'error',
          500,
        );
        return res.end();
      }
      sofar += piece;
      const last = i === pieces.length - 1;
      event(i + 1, {
        output: output(
          incremental ? piece : sofar,
          last ? (toolCall ? 'tool_calls' : 'stop') : 'null',
          toolCall,
        ),
        usage: usageAt(toolCall ? 1 : i + 1),
        request_id: requestId,
      });
    }
    res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (rule) => {
      rules.push(rule);
    },
    reset: () => {
      rules = [];
      requests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
