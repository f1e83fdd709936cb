/**
 * A fake of Xunfei Spark's WebSocket chat API (https://www.xfyun.cn/doc/spark/Web.html) on 127.0.0.1, for relay
 * tests. Paths `/<version>/chat` (v1.1, v2.1, v3.1, v3.5, v4.0) and `/chat/pro-128k`, `/chat/max-32k`.
 *
 * The handshake is checked as iFlytek's gateway checks it (general_url_authentication.html): the query carries
 * `authorization`, `date` and `host`; `host` must be the Host the client connected to, `date` within 300 s of the
 * fake's clock, and `authorization` the base64 of `api_key="…", algorithm="hmac-sha256", headers="host date
 * request-line", signature="…"` where the signature is base64(HMAC-SHA256(APISecret, "host: <host>\ndate:
 * <date>\nGET <path> HTTP/1.1")) for a known APIKey. A refusal is the HTTP answer to the upgrade, as Spark's:
 * 401 `{"message":"Unauthorized"}` (no authorization), 401 `{"message":"HMAC signature cannot be verified"}`
 * (unparsable), 401 `{"message":"HMAC signature does not match"}`, 403 `{"message":"HMAC signature cannot be
 * verified, a valid date or x-date header is required for HMAC Authentication"}` (date off by more than 300 s).
 * A plain GET of the same URL is checked and refused alike.
 *
 * After the upgrade the first message is the request frame: `header.app_id` must be the APPID of that APIKey
 * (else an error frame 11200) and `parameter.chat.domain` the domain of the path's version (else 10163). The
 * answer is "Hello from Spark <domain>" split in frames (status 0, 1, …, 2), the last with
 * `payload.usage.text` (prompt_tokens = characters of all message contents, completion_tokens = frames), unless
 * a rule says otherwise; with `payload.functions` and a last user message mentioning "weather" it answers a
 * function_call of the first function. The socket is closed after the last frame, as Spark does.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

export type SparkAccount = { appId: string; apiSecret: string; apiKey: string };

export type SparkRule = {
  /** Matches the path's version (v3.5, pro-128k, …). */
  version?: string;
  respond: {
    /** Replaces the answer's frames (one text per frame). */
    texts?: string[];
    usage?: {
      question_tokens?: number;
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens?: number;
    };
    /** An error frame (header.code ≠ 0) instead of the answer, after `errorAfter` text frames (default 0). */
    error?: { code: number; message: string };
    errorAfter?: number;
    /** Closes the socket without a close frame after this many text frames (no last frame). */
    dropAfter?: number;
    /** Wait between frames. */
    frameDelayMs?: number;
  };
  times?: number;
};

export type SparkRequest = {
  path: string;
  version: string;
  query: Record<string, string>;
  frame: Record<string, unknown>;
};

export type FakeSpark = {
  /** http://127.0.0.1:<port> (the channel's base URL; the relay turns it into ws://). */
  url: string;
  requests: SparkRequest[];
  /** Handshakes refused, with the status and message sent. */
  refusals: { path: string; status: number; message: string }[];
  on(rule: SparkRule): void;
  reset(): void;
  close(): Promise<void>;
};

const DOMAINS: Record<string, string> = {
  'v1.1': 'lite',
  'v2.1': 'generalv2',
  'v3.1': 'generalv3',
  'v3.5': 'generalv3.5',
  'v4.0': '4.0Ultra',
  'pro-128k': 'pro-128k',
  'max-32k': 'max-32k',
};
const PATH = /^\/(?:(v\d\.\d)\/chat|chat\/(pro-128k|max-32k))$/;
const AUTH = /^api_key="([^"]*)", ?algorithm="([^"]*)", ?headers="([^"]*)", ?signature="([^"]*)"$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function startFakeSpark(opts: {
  accounts: SparkAccount[];
  /** The fake's clock (ms), for the date check. */
  now?: () => number;
}): Promise<FakeSpark> {
  const now = opts.now ?? Date.now;
  const byKey = new Map(opts.accounts.map((a) => [a.apiKey, a]));
  const requests: SparkRequest[] = [];
  const refusals: FakeSpark['refusals'] = [];
  let rules: SparkRule[] = [];

  /** The handshake check: null when accepted, else the refusal. */
  function check(req: IncomingMessage): { status: number; message: string } | { account: SparkAccount } {
    const u = new URL(req.url ?? '/', 'http://fake');
    const q = u.searchParams;
    const authorization = q.get('authorization');
    const date = q.get('date');
    const host = q.get('host');
    if (!authorization || !date || !host) return { status: 401, message: 'Unauthorized' };
    let decoded = '';
    try {
      decoded = Buffer.from(authorization, 'base64').toString('utf8');
    } catch {
      decoded = '';
    }
    const m = AUTH.exec(decoded);
    if (m?.[2] !== 'hmac-sha256' || m[3] !== 'host date request-line' || host !== req.headers.host)
      return { status: 401, message: 'HMAC signature cannot be verified' };
    const at = Date.parse(date);
    if (!Number.isFinite(at) || Math.abs(now() - at) > 300_000)
      return {
        status: 403,
        message:
          'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
      };
    const account = byKey.get(m[1]!);
    if (!account) return { status: 401, message: 'HMAC signature does not match' };
    const want = createHmac('sha256', account.apiSecret)
      .update(`host: ${host}\ndate: ${date}\nGET ${u.pathname} HTTP/1.1`)
      .digest();
    const got = Buffer.from(m[4]!, 'base64');
    if (got.length !== want.length || !timingSafeEqual(got, want))
      return { status: 401, message: 'HMAC signature does not match' };
    return { account };
  }

  const refuse = (path: string, status: number, message: string) => {
    refusals.push({ path, status, message });
    return JSON.stringify({ message });
  };

  const server = createServer((req, res) => {
    const r = check(req);
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if ('status' in r) {
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(refuse(path, r.status, r.message));
      return;
    }
    res.writeHead(426, { 'content-type': 'text/plain' }).end('Upgrade Required');
  });
  const wss = new WebSocketServer({ noServer: true });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const u = new URL(req.url ?? '/', 'http://fake');
    const pm = PATH.exec(u.pathname);
    if (!pm) {
      socket.end(
        'HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 31\r\n\r\n{"message":"no Route matched"}\n',
      );
      return;
    }
    const r = check(req);
    if ('status' in r) {
      const body = refuse(u.pathname, r.status, r.message);
      socket.end(
        `HTTP/1.1 ${r.status} ${r.status === 401 ? 'Unauthorized' : 'Forbidden'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const version = (pm[1] ?? pm[2])!;
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.once('message', (data) => {
        let frame: Obj = {};
        try {
          const j: unknown = JSON.parse(String(data));
          if (isObj(j)) frame = j;
        } catch {
          // answered below as a parameter error
        }
        requests.push({ path: u.pathname, version, query: Object.fromEntries(u.searchParams), frame });
        void answer(ws, r.account, version, frame);
      });
    });
  });

  async function answer(ws: WebSocket, account: SparkAccount, version: string, frame: Obj): Promise<void> {
    const sid = `cht000${Math.floor(Math.random() * 1e8).toString(16)}@dx${Date.now().toString(16)}`;
    const send = (o: Obj) => ws.send(JSON.stringify(o));
    const fail = (code: number, message: string) => {
      send({ header: { code, message, sid, status: 2 } });
      ws.close(1000);
    };
    const header = isObj(frame.header) ? frame.header : {};
    const chat = isObj(frame.parameter) && isObj(frame.parameter.chat) ? frame.parameter.chat : {};
    const payload = isObj(frame.payload) ? frame.payload : {};
    const text = isObj(payload.message) && Array.isArray(payload.message.text) ? payload.message.text : null;
    if (header.app_id !== account.appId) return fail(11200, 'AppIdNoAuthError:(11200)auth no license');
    if (chat.domain !== DOMAINS[version] || !text)
      return fail(10163, `request parameters error: domain ${String(chat.domain)} for ${version}`);

    const ruleIdx = rules.findIndex((x) => !x.version || x.version === version);
    const rule = ruleIdx >= 0 ? rules[ruleIdx] : undefined;
    if (rule && rule.times !== undefined && --rule.times <= 0) rules.splice(ruleIdx, 1);
    const r = rule?.respond ?? {};
    const delay = () => (r.frameDelayMs ? new Promise((res) => setTimeout(res, r.frameDelayMs)) : null);

    const messages = text.filter(isObj);
    const last = messages.at(-1);
    const functions =
      isObj(payload.functions) && Array.isArray(payload.functions.text)
        ? payload.functions.text.filter(isObj)
        : [];
    const texts = r.texts ?? ['Hello ', 'from ', `Spark ${String(chat.domain)}`];
    const promptTokens = messages.reduce((n, m) => n + String(m.content ?? '').length, 0);
    const usage = r.usage ?? {
      question_tokens: String(last?.content ?? '').length,
      prompt_tokens: promptTokens,
      completion_tokens: texts.length,
      total_tokens: promptTokens + texts.length,
    };
    // In the documented order.
    const usageText = {
      question_tokens: usage.question_tokens ?? 0,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    };

    if (functions.length > 0 && /weather/i.test(String(last?.content ?? ''))) {
      send({
        header: { code: 0, message: 'Success', sid, status: 2 },
        payload: {
          choices: {
            status: 2,
            seq: 0,
            text: [
              {
                content: '',
                role: 'assistant',
                content_type: 'text',
                function_call: { name: String(functions[0]!.name), arguments: '{"location":"Hefei"}' },
                index: 0,
              },
            ],
          },
          usage: { text: usageText },
        },
      });
      ws.close(1000);
      return;
    }
    for (const [i, t] of texts.entries()) {
      if (r.error && i === (r.errorAfter ?? 0)) return fail(r.error.code, r.error.message);
      if (r.dropAfter !== undefined && i === r.dropAfter) {
        ws.terminate();
        return;
      }
      const status = i === texts.length - 1 ? 2 : i === 0 ? 0 : 1;
      send({
        header: { code: 0, message: 'Success', sid, status },
        payload: {
          choices: { status, seq: i, text: [{ content: t, role: 'assistant', index: 0 }] },
          ...(status === 2 ? { usage: { text: usageText } } : {}),
        },
      });
      await delay();
    }
    if (r.error && (r.errorAfter ?? 0) >= texts.length) return fail(r.error.code, r.error.message);
    ws.close(1000);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    refusals,
    on(rule) {
      rules.push(rule);
    },
    reset() {
      rules = [];
      requests.length = 0;
      refusals.length = 0;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
