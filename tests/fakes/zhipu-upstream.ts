/**
 * A fake of Zhipu's ChatGLM v3 API (https://open.bigmodel.cn/dev/api, "model-api") for relay tests, on
 * 127.0.0.1: `POST /api/paas/v3/model-api/{model}/invoke` and `/sse-invoke`, and the `text_embedding` model.
 *
 * Auth as Zhipu checks it: `Authorization` holds a JWT (no "Bearer") whose protected header is
 * `{alg: "HS256", sign_type: "SIGN"}` and whose claims are `api_key` (the id part of a known `id.secret` key),
 * `exp` and `timestamp` in milliseconds. The signature is verified with jose against the key's secret. Refusals
 * are Zhipu's envelope `{code, msg, success: false}` with HTTP 200 (1001 no header, 1002 not a valid token,
 * 1003 expired, 1004 wrong signature or unknown key).
 *
 * Deterministic answers: "Hello from <model>" (JSON-quoted in `content` as v3 returns it); a stream is one
 * `event: add` per word (with `incremental`; without it every event repeats the text so far), then `event:
 * finish` with `meta: {"task_status","usage","task_id","request_id"}`; text with line breaks is sent as several
 * `data:` lines of one event. usage: prompt_tokens = words of the prompt, completion_tokens = words of the answer.
 * Embeddings: `{prompt}` → `data.embedding` `[words, 0.5, -0.5]`, usage prompt_tokens = words. Rules override
 * content, usage, answer an error code, interrupt the stream, or send a raw body; `times` counts them down.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, errors, jwtVerify } from 'jose';

export type ZhipuRule = {
  model?: string;
  respond: {
    content?: string;
    usage?: { prompt_tokens: number; completion_tokens: number };
    /** `{code, msg, success: false}` with HTTP 200. */
    error?: { code: number; msg: string };
    /** End the stream with `event: interrupted` after the first word. */
    interrupt?: boolean;
    status?: number;
    body?: string;
  };
  times?: number;
};

export type ZhipuRequest = {
  path: string;
  model: string;
  method: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  /** The verified JWT claims. */
  claims?: Record<string, unknown>;
};

export type FakeZhipu = {
  url: string;
  requests: ZhipuRequest[];
  on(rule: ZhipuRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;
const MODELS = new Set(['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite', 'characterglm']);
const words = (s: unknown): number => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean).length : 0);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeZhipu(opts: { keys: string[] }): Promise<FakeZhipu> {
  const secrets = new Map(
    opts.keys.map((k) => {
      const [id, secret] = k.split('.');
      return [id!, secret!] as const;
    }),
  );
  let rules: ZhipuRule[] = [];
  const requests: ZhipuRequest[] = [];

  const envelope = (res: ServerResponse, body: Obj) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, code: number, msg: string) =>
    envelope(res, { code, msg, success: false });

  /** The claims of a valid token, or the refusal to send. */
  async function verify(auth: string | undefined): Promise<Obj | { code: number; msg: string }> {
    if (!auth) return { code: 1001, msg: 'Header中未收到Authorization参数，无法进行身份验证。' };
    let header: Obj;
    try {
      header = decodeProtectedHeader(auth) as Obj;
    } catch {
      return { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
    }
    if (header.alg !== 'HS256' || header.sign_type !== 'SIGN')
      return { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
    const payloadPart = auth.split('.')[1] ?? '';
    let claims: Obj;
    try {
      claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as Obj;
    } catch {
      return { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
    }
    const secret = secrets.get(String(claims.api_key));
    if (!secret) return { code: 1004, msg: 'Authorization Token验证失败，请检查' };
    try {
      // jose reads exp as seconds; Zhipu's is in milliseconds, checked below.
      await jwtVerify(auth, new TextEncoder().encode(secret), { algorithms: ['HS256'] });
    } catch (err) {
      if (err instanceof errors.JWSSignatureVerificationFailed)
        return { code: 1004, msg: 'Authorization Token验证失败，请检查' };
      return { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
    }
    if (typeof claims.exp !== 'number' || typeof claims.timestamp !== 'number')
      return { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
    // Milliseconds: a token with exp in seconds (a common mistake) reads as long expired.
    if (claims.exp <= Date.now()) return { code: 1003, msg: 'Authorization Token已过期，请重新生成/获取' };
    return claims;
  }

  function takeRule(model: string): ZhipuRule | null {
    const rule = rules.find((r) => !r.model || r.model === model);
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
    const m = /^\/api\/paas\/v3\/model-api\/([^/]+)\/(invoke|sse-invoke)$/.exec(url.pathname);
    const record: ZhipuRequest = {
      path: url.pathname,
      model: m ? decodeURIComponent(m[1]!) : '',
      method: m?.[2] ?? '',
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body,
    };
    requests.push(record);
    if (!m || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          timestamp: new Date().toISOString(),
          status: 404,
          error: 'Not Found',
          path: url.pathname,
        }),
      );
      return;
    }
    const claims = await verify(req.headers.authorization);
    if (typeof claims.code === 'number') return refuse(res, claims.code, String(claims.msg));
    record.claims = claims;

    const model = record.model;
    const rule = takeRule(model);
    if (rule?.respond.body !== undefined || rule?.respond.status) {
      res.writeHead(rule.respond.status ?? 200, { 'content-type': 'application/json' });
      res.end(rule.respond.body ?? '');
      return;
    }
    if (rule?.respond.error) return refuse(res, rule.respond.error.code, rule.respond.error.msg);
    if (!body) return refuse(res, 1214, 'prompt参数非法。请检查文档。');
    const taskId = `83059868824257${String(requests.length).padStart(5, '0')}`;

    if (model === 'text_embedding') {
      if (typeof body.prompt !== 'string' || body.prompt === '')
        return refuse(res, 1214, 'prompt参数非法。请检查文档。');
      const prompt = rule?.respond.usage?.prompt_tokens ?? words(body.prompt);
      return envelope(res, {
        code: 200,
        msg: '操作成功',
        data: {
          request_id: taskId,
          task_id: taskId,
          task_status: 'SUCCESS',
          embedding: [words(body.prompt), 0.5, -0.5],
          usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt },
        },
        success: true,
      });
    }
    if (!MODELS.has(model)) return refuse(res, 1211, '模型不存在，请检查模型代码。');
    const prompt = Array.isArray(body.prompt) ? (body.prompt as Obj[]) : null;
    if (!prompt || prompt.length === 0 || prompt.some((p) => typeof p.content !== 'string'))
      return refuse(res, 1214, 'prompt参数非法。请检查文档。');
    for (const key of ['temperature', 'top_p'])
      if (
        body[key] !== undefined &&
        (typeof body[key] !== 'number' || (body[key] as number) < 0 || (body[key] as number) > 1)
      )
        return refuse(res, 1214, `${key}参数非法。请检查文档。`);

    const content = rule?.respond.content ?? `Hello from ${model}`;
    const usage = {
      prompt_tokens: rule?.respond.usage?.prompt_tokens ?? prompt.reduce((n, p) => n + words(p.content), 0),
      completion_tokens: rule?.respond.usage?.completion_tokens ?? words(content),
      total_tokens: 0,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

    if (m[2] === 'sse-invoke') {
      res.writeHead(200, { 'content-type': 'text/event-stream;charset=UTF-8' });
      const pieces = content.split(/(?<=[ \n])/);
      const event = (name: string, data: string, meta?: Obj) => {
        let s = `id: ${taskId}\nevent: ${name}\n`;
        for (const line of data.split('\n')) s += `data: ${line}\n`;
        if (meta) s += `meta: ${JSON.stringify(meta)}\n`;
        res.write(`${s}\n`);
      };
      let sent = '';
      for (const piece of pieces) {
        sent += piece;
        event('add', body.incremental === true ? piece : sent);
        if (rule?.respond.interrupt) {
          event(
            'interrupted',
            '系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语，感谢您的配合。',
          );
          res.end();
          return;
        }
      }
      event('finish', '', { task_status: 'SUCCESS', usage, task_id: taskId, request_id: taskId });
      res.end();
      return;
    }
    return envelope(res, {
      code: 200,
      msg: '操作成功',
      data: {
        request_id: taskId,
        task_id: taskId,
        task_status: 'SUCCESS',
        choices: [{ role: 'assistant', content: JSON.stringify(content) }],
        usage,
      },
      success: true,
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
