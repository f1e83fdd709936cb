/**
 * A fake of Cohere's API v2 (https://docs.cohere.com/reference/chat, /embed, /rerank, /list-models) for relay
 * tests: `Authorization: Bearer <key>` (a wrong key gets 401 `{id, message:"invalid api token"}`), `POST /v2/chat`
 * whole and streamed (SSE `event:` + `data:` lines: message-start, content-start, content-delta, content-end,
 * tool-plan-delta, tool-call-start/delta/end, message-end with finish_reason and usage, then `data: [DONE]`),
 * `POST /v2/embed` (`embeddings.float`, `meta.billed_units.input_tokens`), `POST /v2/rerank` (`results[{index,
 * relevance_score}]`, `meta.billed_units.search_units`) and `GET /v1/models`. Errors are `{id, message}`.
 *
 * Deterministic: the answer is "Hello from <model>" in word deltas; with `tools` and a last user message mentioning
 * "weather" it plans "I will check the weather." and calls the first tool with {"location":"<city after 'in'>"}.
 * Usage: billed_units.input_tokens = words of the messages, tokens.input_tokens = that + 64 (Cohere's preamble),
 * output = number of deltas (or argument fragments); rules override. Embeddings are 4 values per text, billed
 * one token per word; rerank scores are the share of query words found in each document.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type CohereRule = {
  model?: string;
  times?: number;
  respond: {
    content?: string;
    status?: number;
    message?: string;
    finishReason?: string;
    tokens?: { input_tokens?: number; output_tokens?: number };
    billedUnits?: { input_tokens?: number; output_tokens?: number };
    /** Leave `usage.tokens` out (only billed_units), as some replies do. */
    omitTokens?: boolean;
  };
};

export type CohereRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Obj | null;
};

export type FakeCohere = {
  url: string;
  requests: CohereRequest[];
  on(rule: CohereRule): void;
  reset(): void;
  close(): Promise<void>;
};

export const PREAMBLE_TOKENS = 64;

export function words(v: unknown): number {
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean).length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + words(x), 0);
  if (isObject(v)) return words(v.text) + words(v.content) + words(v.tool_plan);
  return 0;
}

function lastUserText(messages: unknown): string {
  const list = Array.isArray(messages) ? messages : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (isObject(m) && m.role === 'user')
      return typeof m.content === 'string'
        ? m.content
        : (Array.isArray(m.content) ? m.content : [])
            .map((b) => (isObject(b) ? String(b.text ?? '') : ''))
            .join(' ');
  }
  return '';
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

export async function startFakeCohere(opts: { keys: string[] }): Promise<FakeCohere> {
  const requests: CohereRequest[] = [];
  let rules: CohereRule[] = [];

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string) =>
    json(res, status, { id: randomUUID(), message });

  const takeRule = (model: string) => {
    const i = rules.findIndex((r) => !r.model || r.model === model);
    const rule = i >= 0 ? rules[i] : undefined;
    if (rule?.times !== undefined && --rule.times <= 0) rules.splice(i, 1);
    return rule?.respond ?? {};
  };

  function chat(res: ServerResponse, body: Obj) {
    const model = String(body.model);
    const r = takeRule(model);
    if (r.status && r.status >= 400) return error(res, r.status, r.message ?? 'internal server error');
    const id = randomUUID();
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    const callTool = tools.length > 0 && /weather/i.test(lastUserText(body.messages));
    const fn = callTool && isObject(tools[0]?.function) ? (tools[0].function as Obj) : null;
    const city = /\bin\s+([A-Z][\w-]*)/.exec(lastUserText(body.messages))?.[1] ?? 'Paris';
    const args = JSON.stringify({ location: city });
    const fragments = [args.slice(0, 8), args.slice(8)];
    const deltas = (r.content ?? `Hello from ${model}`).split(/(?= )/);
    const plan = 'I will check the weather.';
    const billedIn = r.billedUnits?.input_tokens ?? words(body.messages);
    const output = r.tokens?.output_tokens ?? (fn ? fragments.length : deltas.length);
    const usage: Obj = {
      billed_units: { input_tokens: billedIn, output_tokens: r.billedUnits?.output_tokens ?? output },
      ...(r.omitTokens
        ? {}
        : {
            tokens: {
              input_tokens: r.tokens?.input_tokens ?? billedIn + PREAMBLE_TOKENS,
              output_tokens: output,
            },
          }),
    };
    const finish = r.finishReason ?? (fn ? 'TOOL_CALL' : 'COMPLETE');
    const call = fn
      ? {
          id: `${String(fn.name)}_${id.slice(0, 12)}`,
          type: 'function',
          function: { name: String(fn.name), arguments: args },
        }
      : null;

    if (body.stream !== true) {
      const message: Obj = { role: 'assistant' };
      if (call) Object.assign(message, { tool_plan: plan, tool_calls: [call] });
      else message.content = [{ type: 'text', text: deltas.join('') }];
      return json(res, 200, { id, finish_reason: finish, message, usage });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type: string, data: Obj) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message-start', {
      id,
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    });
    if (call) {
      for (const p of plan.split(/(?= )/)) send('tool-plan-delta', { delta: { message: { tool_plan: p } } });
      send('tool-call-start', {
        index: 0,
        delta: { message: { tool_calls: { ...call, function: { ...call.function, arguments: '' } } } },
      });
      for (const f of fragments)
        send('tool-call-delta', {
          index: 0,
          delta: { message: { tool_calls: { function: { arguments: f } } } },
        });
      send('tool-call-end', { index: 0 });
    } else {
      send('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
      for (const d of deltas)
        send('content-delta', { index: 0, delta: { message: { content: { text: d } } } });
      send('content-end', { index: 0 });
    }
    send('message-end', { delta: { finish_reason: finish, usage } });
    res.write('data: [DONE]\n\n');
    res.end();
  }

  function embed(res: ServerResponse, body: Obj) {
    if (typeof body.input_type !== 'string')
      return error(res, 400, 'invalid request: input_type is required for embed-v3 and newer models');
    const texts = Array.isArray(body.texts) ? body.texts.map(String) : [];
    const r = takeRule(String(body.model));
    if (r.status && r.status >= 400) return error(res, r.status, r.message ?? 'internal server error');
    const vector = (t: string) => [t.length / 256, words(t) / 256, 0.5, -0.25];
    json(res, 200, {
      id: randomUUID(),
      texts,
      embeddings: { float: texts.map(vector) },
      meta: {
        api_version: { version: '2' },
        billed_units: { input_tokens: r.billedUnits?.input_tokens ?? words(texts) },
      },
      response_type: 'embeddings_by_type',
    });
  }

  function rerank(res: ServerResponse, body: Obj) {
    const query = String(body.query ?? '')
      .toLowerCase()
      .split(/\s+/)
      .filter(Boolean);
    const docs = Array.isArray(body.documents) ? body.documents : [];
    if (docs.some((d) => typeof d !== 'string'))
      return error(res, 400, 'invalid request: documents must be strings');
    const r = takeRule(String(body.model));
    if (r.status && r.status >= 400) return error(res, r.status, r.message ?? 'internal server error');
    const scored = (docs as string[]).map((d, index) => {
      const text = d.toLowerCase();
      const hits = query.filter((w) => text.includes(w)).length;
      return { index, relevance_score: query.length ? hits / query.length : 0 };
    });
    scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
    const topN = typeof body.top_n === 'number' ? body.top_n : scored.length;
    json(res, 200, {
      id: randomUUID(),
      results: scored.slice(0, topN),
      meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
    });
  }

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
    const method = req.method ?? 'GET';
    requests.push({ method, path: url.pathname, headers, body });

    const key = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!key || !opts.keys.includes(key)) return error(res, 401, 'invalid api token');
    if (method === 'GET' && url.pathname === '/v1/models')
      return json(res, 200, {
        models: ['command-a-03-2025', 'command-r-plus-08-2024', 'embed-v4.0', 'rerank-v3.5'].map((name) => ({
          name,
          endpoints: [name.startsWith('embed') ? 'embed' : name.startsWith('rerank') ? 'rerank' : 'chat'],
          finetuned: false,
          context_length: 128000,
        })),
      });
    if (method !== 'POST' || !['/v2/chat', '/v2/embed', '/v2/rerank'].includes(url.pathname))
      return error(res, 404, `route not found: ${method} ${url.pathname}`);
    if (!body || typeof body.model !== 'string') return error(res, 400, 'invalid request: model is required');
    if (url.pathname === '/v2/chat') {
      if (!Array.isArray(body.messages) || body.messages.length === 0)
        return error(res, 400, 'invalid request: messages must not be empty');
      return chat(res, body);
    }
    if (url.pathname === '/v2/embed') return embed(res, body);
    return rerank(res, body);
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
