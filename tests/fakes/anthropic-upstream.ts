/**
 * A fake of Anthropic's Messages API (https://docs.anthropic.com/en/api/messages) for relay tests: the wire
 * format the official SDK parses — the key as `x-api-key` or Bearer, the `anthropic-version` header, the message object, the SSE event
 * sequence (message_start, content_block_start, ping, content_block_delta with text/input_json/thinking/signature
 * deltas, content_block_stop, message_delta, message_stop) and the `{"type":"error"}` envelope.
 *
 * Deterministic: the answer is "Hello from <model>" in three text deltas; with `tools` and a last user message
 * mentioning "weather" it calls the first tool with {"location": "<city after 'in'>"}; with `thinking` enabled a
 * thinking block "Let me think." (+ signature) comes first. With structured output (`output_config.format`, a
 * json_schema with its `schema` object; anything else is refused as the API does) the text is the JSON object
 * {"message": <text>}. Usage defaults: input = words of the request, output = number of deltas; rules override it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AnthropicUsage = {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
};

export type AnthropicRule = {
  model?: string;
  respond: {
    usage?: AnthropicUsage;
    content?: string;
    status?: number;
    error?: { type: string; message: string };
    headers?: Record<string, string>;
  };
  times?: number;
};

export type AnthropicRequest = {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
};

export type FakeAnthropic = {
  url: string;
  requests: AnthropicRequest[];
  on(rule: AnthropicRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function words(v: unknown): number {
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean).length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + words(x), 0);
  if (isObject(v)) return words(v.text) + words(v.content);
  return 0;
}

function lastUserText(messages: unknown): string {
  const list = Array.isArray(messages) ? messages : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (!isObject(m) || m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return m.content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join(' ');
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

export async function startFakeAnthropic(opts: { keys?: string[] } = {}): Promise<FakeAnthropic> {
  const requests: AnthropicRequest[] = [];
  let rules: AnthropicRule[] = [];
  let seq = 0;

  const sendError = (res: ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++seq}` });
    res.end(JSON.stringify({ type: 'error', error: { type, message } }));
  };

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
    requests.push({ path: url.pathname, headers, body });

    // The API takes the key as x-api-key or, from newer SDKs, as a Bearer token.
    const key = headers['x-api-key'] ?? /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!key || (opts.keys && !opts.keys.includes(key)))
      return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    if (!headers['anthropic-version'])
      return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');

    if (req.method === 'GET' && url.pathname === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          data: ['claude-sonnet-4-20250514', 'claude-3-5-haiku-20241022'].map((id) => ({
            type: 'model',
            id,
            display_name: id,
            created_at: '2025-05-14T00:00:00Z',
          })),
          has_more: false,
          first_id: 'claude-sonnet-4-20250514',
          last_id: 'claude-3-5-haiku-20241022',
        }),
      );
      return;
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/messages')
      return sendError(res, 404, 'not_found_error', `Not found: ${url.pathname}`);
    if (
      !body ||
      typeof body.model !== 'string' ||
      typeof body.max_tokens !== 'number' ||
      !Array.isArray(body.messages)
    )
      return sendError(res, 400, 'invalid_request_error', 'model, max_tokens and messages are required');

    const outputConfig = isObject(body.output_config) ? body.output_config : null;
    const format = outputConfig && isObject(outputConfig.format) ? outputConfig.format : null;
    if (outputConfig?.format !== undefined && (format?.type !== 'json_schema' || !isObject(format.schema)))
      return sendError(
        res,
        400,
        'invalid_request_error',
        'output_config.format: a json_schema with a schema is required',
      );

    const model = body.model;
    const ruleIndex = rules.findIndex((r) => !r.model || r.model === model);
    const rule = ruleIndex >= 0 ? rules[ruleIndex] : undefined;
    if (rule?.times !== undefined && --rule.times <= 0) rules.splice(ruleIndex, 1);
    const r = rule?.respond ?? {};
    if (r.status && r.status >= 400)
      return sendError(
        res,
        r.status,
        r.error?.type ?? 'api_error',
        r.error?.message ?? 'Internal server error',
      );

    const id = `msg_fake${++seq}`;
    const askWeather =
      Array.isArray(body.tools) && body.tools.length > 0 && /weather/i.test(lastUserText(body.messages));
    const thinking = isObject(body.thinking) && body.thinking.type === 'enabled';
    const firstTool = askWeather && isObject(body.tools?.[0 as never]) ? (body.tools as Obj[])[0] : undefined;
    const city = /\bin\s+([A-Z][\w-]*)/.exec(lastUserText(body.messages))?.[1] ?? 'Paris';
    const answer = r.content ?? `Hello from ${model}`;
    const deltas = (format ? JSON.stringify({ message: answer }) : answer).split(/(?= )/);
    const toolInput = JSON.stringify({ location: city });
    const toolFragments = [toolInput.slice(0, 8), toolInput.slice(8)];
    const usage = {
      input_tokens: r.usage?.input_tokens ?? words(body.system) + words(body.messages),
      cache_creation_input_tokens: r.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: r.usage?.cache_read_input_tokens ?? 0,
      output_tokens:
        r.usage?.output_tokens ?? (firstTool ? toolFragments.length : deltas.length) + (thinking ? 1 : 0),
    };
    const content: Obj[] = [];
    if (thinking) content.push({ type: 'thinking', thinking: 'Let me think.', signature: 'sig_fake' });
    if (firstTool)
      content.push({
        type: 'tool_use',
        id: `toolu_fake${seq}`,
        name: String(firstTool.name),
        input: { location: city },
      });
    else content.push({ type: 'text', text: deltas.join('') });
    const stopReason = firstTool ? 'tool_use' : 'end_turn';
    const extraHeaders = r.headers ?? {};

    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${seq}`, ...extraHeaders });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extraHeaders });
    const send = (event: string, data: Obj) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    let index = 0;
    if (thinking) {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } });
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: 'Let me think.' } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig_fake' } });
      send('content_block_stop', { index });
      index++;
    }
    send('ping', {});
    if (firstTool) {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: `toolu_fake${seq}`, name: String(firstTool.name), input: {} },
      });
      for (const f of toolFragments)
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: f } });
    } else {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const d of deltas) send('content_block_delta', { index, delta: { type: 'text_delta', text: d } });
    }
    send('content_block_stop', { index });
    send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send('message_stop', {});
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
