/**
 * A fake of Baidu Wenxin v1 (Qianfan "wenxinworkshop", https://cloud.baidu.com/doc/WENXINWORKSHOP/s/flfmc9do2)
 * for relay tests, on 127.0.0.1:
 * - `POST /oauth/2.0/token?grant_type=client_credentials&client_id=<APIKey>&client_secret=<SecretKey>` issues
 *   `{access_token, expires_in: 2592000, ...}` for a known key pair; an unknown pair is refused as Baidu does
 *   (401 `{error: "invalid_client", error_description: "unknown client id"}`), another grant_type 400
 *   `unsupported_grant_type`.
 * - `POST /rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…` and `/embeddings/{endpoint}`: an
 *   unknown or revoked token answers HTTP 200 `{error_code: 110, error_msg: "Access token invalid or no longer
 *   valid"}`, an unknown endpoint `{error_code: 3, "Unsupported openapi method"}`. Chat messages must be
 *   non-empty, odd in number and alternate user/assistant starting with user (336003 otherwise), `system` must
 *   be a string.
 *
 * Deterministic answer: "Hello from <endpoint>" (one SSE frame per word when `stream`), usage prompt_tokens =
 * words of system + messages, completion_tokens = words of the answer; embeddings `[words, index, 0.5]` per
 * input with prompt_tokens = words of the inputs. Rules (`on`) override content, usage, answer an error_code, or
 * a raw status/body; the first matching rule wins and `times` counts it down. Rules apply after auth.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type BaiduRule = {
  /** Matches the endpoint of the path (completions_pro, ernie_speed, embedding-v1, ...). */
  endpoint?: string;
  respond: {
    content?: string;
    usage?: { prompt_tokens: number; completion_tokens: number };
    /** Answer `{error_code, error_msg}` (HTTP 200, as Wenxin does). */
    error?: { code: number; message: string };
    /** Raw reply. */
    status?: number;
    body?: string;
  };
  times?: number;
};

export type BaiduRequest = {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
};

export type FakeBaidu = {
  url: string;
  requests: BaiduRequest[];
  /** How many access tokens were issued (one per successful exchange). */
  tokensIssued(): number;
  /** Invalidates every access token issued so far (the next call with one gets error_code 110). */
  revokeTokens(): void;
  on(rule: BaiduRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;

const CHAT_ENDPOINTS = new Set([
  'completions_pro',
  'completions',
  'eb-instant',
  'ernie_speed',
  'ernie-speed-128k',
  'ernie-lite-8k',
  'ernie-tiny-8k',
  'ernie_bot_8k',
  'ernie-4.0-turbo-8k',
  'ernie-3.5-8k-0205',
]);
const EMBED_ENDPOINTS = new Set(['embedding-v1', 'bge_large_zh', 'bge_large_en', 'tao_8k']);

const words = (s: unknown): number => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean).length : 0);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeBaidu(opts: { keys: [string, string][] }): Promise<FakeBaidu> {
  const pairs = new Map(opts.keys);
  const tokens = new Set<string>();
  let issued = 0;
  let rules: BaiduRule[] = [];
  const requests: BaiduRequest[] = [];

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const wenxinError = (res: ServerResponse, code: number, msg: string) =>
    json(res, 200, { error_code: code, error_msg: msg });

  function takeRule(endpoint: string): BaiduRule | null {
    const rule = rules.find((r) => !r.endpoint || r.endpoint === endpoint);
    if (!rule) return null;
    if (rule.times !== undefined && --rule.times <= 0) rules = rules.filter((r) => r !== rule);
    return rule;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    let body: Obj | null = null;
    try {
      body = text ? (JSON.parse(text) as Obj) : null;
    } catch {
      body = null;
    }
    const query = Object.fromEntries(url.searchParams);
    requests.push({
      path: url.pathname,
      query,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body,
    });
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' });

    if (url.pathname === '/oauth/2.0/token') {
      if (query.grant_type !== 'client_credentials')
        return json(res, 400, {
          error: 'unsupported_grant_type',
          error_description: 'The authorization grant type is not supported',
        });
      const secret = pairs.get(query.client_id ?? '');
      if (!secret || secret !== query.client_secret)
        return json(res, 401, { error: 'invalid_client', error_description: 'unknown client id' });
      issued++;
      const token = `24.fake${issued}${Math.random().toString(16).slice(2, 10)}.2592000.1700000000.282335-1`;
      tokens.add(token);
      return json(res, 200, {
        refresh_token: `25.${token.slice(3)}`,
        expires_in: 2592000,
        session_key: 'fake-session-key',
        access_token: token,
        scope: 'public brain_all_scope wenxinworkshop_mgr',
        session_secret: 'fake-session-secret',
      });
    }

    const m = /^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/(chat|embeddings)\/([^/]+)$/.exec(url.pathname);
    if (!m) return json(res, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
    if (!tokens.has(query.access_token ?? ''))
      return wenxinError(res, 110, 'Access token invalid or no longer valid');
    const kind = m[1]!;
    const endpoint = decodeURIComponent(m[2]!);
    if (!(kind === 'chat' ? CHAT_ENDPOINTS : EMBED_ENDPOINTS).has(endpoint))
      return wenxinError(res, 3, 'Unsupported openapi method');
    if (!body) return wenxinError(res, 336001, 'Invalid Argument');

    const rule = takeRule(endpoint);
    if (rule?.respond.body !== undefined || rule?.respond.status) {
      res.writeHead(rule.respond.status ?? 200, { 'content-type': 'application/json' });
      res.end(rule.respond.body ?? '');
      return;
    }
    if (rule?.respond.error) return wenxinError(res, rule.respond.error.code, rule.respond.error.message);

    if (kind === 'embeddings') {
      const input = Array.isArray(body.input) ? body.input : null;
      if (!input || input.length === 0 || input.some((s) => typeof s !== 'string'))
        return wenxinError(res, 336003, 'input must be a non-empty list of strings');
      const prompt = rule?.respond.usage?.prompt_tokens ?? input.reduce((n: number, s) => n + words(s), 0);
      return json(res, 200, {
        id: `as-emb${requests.length}`,
        object: 'embedding_list',
        created: Math.floor(Date.now() / 1000),
        data: input.map((s, index) => ({ object: 'embedding', embedding: [words(s), index, 0.5], index })),
        usage: { prompt_tokens: prompt, total_tokens: prompt },
      });
    }

    const messages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
    if (messages.length === 0 || messages.length % 2 === 0)
      return wenxinError(res, 336003, 'the length of messages must be an odd number');
    for (const [i, msg] of messages.entries()) {
      const want = i % 2 === 0 ? 'user' : 'assistant';
      // A function result takes the user's place in the alternation.
      if (msg.role !== want && !(want === 'user' && msg.role === 'function'))
        return wenxinError(res, 336003, `the role of message ${i} must be ${want}`);
    }
    if (body.system !== undefined && typeof body.system !== 'string')
      return wenxinError(res, 336003, 'system must be a string');

    const content = rule?.respond.content ?? `Hello from ${endpoint}`;
    const pieces = content.split(/(?<= )/);
    const prompt =
      rule?.respond.usage?.prompt_tokens ??
      words(body.system) + messages.reduce((n, msg) => n + words(msg.content), 0);
    const completion = rule?.respond.usage?.completion_tokens ?? words(content);
    const id = `as-fake${requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      pieces.forEach((piece, i) => {
        const last = i === pieces.length - 1;
        const frame = {
          id,
          object: 'chat.completion',
          created,
          sentence_id: i,
          is_end: last,
          is_truncated: false,
          result: piece,
          need_clear_history: false,
          // Wenxin reports usage on every frame; the last one is complete.
          usage: last
            ? usage
            : { prompt_tokens: prompt, completion_tokens: i + 1, total_tokens: prompt + i + 1 },
          ...(last ? { finish_reason: 'normal' } : {}),
        };
        res.write(`data: ${JSON.stringify(frame)}\n\n`);
      });
      res.end();
      return;
    }
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      result: content,
      is_truncated: false,
      need_clear_history: false,
      finish_reason: 'normal',
      usage,
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tokensIssued: () => issued,
    revokeTokens: () => tokens.clear(),
    on(rule) {
      rules.push({ ...rule });
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
