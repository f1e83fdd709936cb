/**
 * A fake of Tencent Hunyuan's ChatCompletions (Tencent Cloud API 3.0, https://cloud.tencent.com/document/api/
 * 1729/105701) for relay tests: `POST /` on 127.0.0.1 with `X-TC-Action: ChatCompletions` and `X-TC-Version:
 * 2023-09-01`.
 *
 * Auth as Tencent checks it, recomputed here independently of the adaptor's signer: the `Authorization`
 * header `TC3-HMAC-SHA256 Credential=<SecretId>/<date>/<service>/tc3_request, SignedHeaders=<names>,
 * Signature=<hex>` is parsed; the SecretId must be known (AuthFailure.SecretIdNotFound), X-TC-Timestamp within
 * five minutes (AuthFailure.SignatureExpire), the date its UTC date and the service "hunyuan"; SignedHeaders must
 * include content-type and host, whose values are read from the request as received; the canonical request
 * hashes the raw body. A mismatch is AuthFailure.SignatureFailure. Every failure is HTTP 200
 * `{Response: {Error: {Code, Message}, RequestId}}`, as Tencent Cloud answers.
 *
 * Messages: system only first, then user/assistant alternating, ending with user (InvalidParameter otherwise).
 * Deterministic answer "Hello from <Model>" (one SSE frame per word when Stream, Usage on every frame), usage
 * PromptTokens = words of the messages, CompletionTokens = words of the answer. Rules override content, usage,
 * answer an error Code, or a raw body; `times` counts them down. Rules apply after auth.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TencentRule = {
  model?: string;
  respond: {
    content?: string;
    usage?: { PromptTokens: number; CompletionTokens: number };
    error?: { Code: string; Message: string };
    status?: number;
    body?: string;
  };
  times?: number;
};

export type TencentRequest = {
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  secretId?: string;
};

export type FakeTencent = {
  url: string;
  requests: TencentRequest[];
  on(rule: TencentRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;
const MODELS = new Set(['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro', 'hunyuan-turbo']);
const words = (s: unknown): number => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean).length : 0);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Tencent's TC3 signature of a received request, computed the way the service does. */
function expectedSignature(opts: {
  secretKey: string;
  date: string;
  service: string;
  timestamp: string;
  signedHeaderNames: string[];
  headers: IncomingMessage['headers'];
  rawBody: string;
}): string {
  const hex = (data: string) => createHash('sha256').update(data).digest('hex');
  let canonicalHeaders = '';
  for (const name of opts.signedHeaderNames) {
    const value = String(opts.headers[name] ?? '')
      .trim()
      .toLowerCase();
    canonicalHeaders += `${name}:${value}\n`;
  }
  const canonical = `POST\n/\n\n${canonicalHeaders}\n${opts.signedHeaderNames.join(';')}\n${hex(opts.rawBody)}`;
  const scope = `${opts.date}/${opts.service}/tc3_request`;
  const toSign = `TC3-HMAC-SHA256\n${opts.timestamp}\n${scope}\n${hex(canonical)}`;
  let key: Buffer = createHmac('sha256', `TC3${opts.secretKey}`).update(opts.date).digest();
  key = createHmac('sha256', key).update(opts.service).digest();
  key = createHmac('sha256', key).update('tc3_request').digest();
  return createHmac('sha256', key).update(toSign).digest('hex');
}

export async function startFakeTencent(opts: {
  keys: [secretId: string, secretKey: string][];
}): Promise<FakeTencent> {
  const secrets = new Map(opts.keys);
  let rules: TencentRule[] = [];
  const requests: TencentRequest[] = [];

  const reply = (res: ServerResponse, response: Obj) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ Response: { ...response, RequestId: randomUUID() } }));
  };
  const fail = (res: ServerResponse, Code: string, Message: string) =>
    reply(res, { Error: { Code, Message } });

  /** null when the signature holds, else the error to answer. */
  function checkAuth(req: IncomingMessage, rawBody: string, record: TencentRequest): [string, string] | null {
    const auth = req.headers.authorization ?? '';
    const m =
      /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/([^/]+)\/tc3_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return ['AuthFailure.InvalidAuthorization', 'Authorization in the request header is invalid.'];
    const [, secretId, date, service, signed, signature] = m as unknown as string[];
    record.secretId = secretId;
    const secretKey = secrets.get(secretId!);
    if (!secretKey)
      return [
        'AuthFailure.SecretIdNotFound',
        'The SecretId is not found, please ensure that your SecretId is correct.',
      ];
    const timestamp = String(req.headers['x-tc-timestamp'] ?? '');
    if (!/^\d+$/.test(timestamp) || Math.abs(Number(timestamp) - Date.now() / 1000) > 300)
      return [
        'AuthFailure.SignatureExpire',
        'Signature expired. Timestamp and server time cannot differ by more than five minutes.',
      ];
    const names = signed!.split(';');
    const sorted = [...names].sort();
    if (!names.includes('content-type') || !names.includes('host') || names.join(';') !== sorted.join(';'))
      return [
        'AuthFailure.SignatureFailure',
        'The provided credentials could not be validated. Please check your signature is correct.',
      ];
    const dateOfTimestamp = new Date(Number(timestamp) * 1000).toISOString().slice(0, 10);
    const want = expectedSignature({
      secretKey,
      date: date!,
      service: service!,
      timestamp,
      signedHeaderNames: names,
      headers: req.headers,
      rawBody,
    });
    if (service !== 'hunyuan' || date !== dateOfTimestamp || want !== signature)
      return [
        'AuthFailure.SignatureFailure',
        'The provided credentials could not be validated. Please check your signature is correct.',
      ];
    return null;
  }

  function takeRule(model: string): TencentRule | null {
    const rule = rules.find((r) => !r.model || r.model === model);
    if (!rule) return null;
    if (rule.times !== undefined && --rule.times <= 0) rules = rules.filter((r) => r !== rule);
    return rule;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    let body: Obj | null = null;
    try {
      body = rawBody ? (JSON.parse(rawBody) as Obj) : null;
    } catch {
      body = null;
    }
    const record: TencentRequest = {
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body,
    };
    requests.push(record);
    if (req.method !== 'POST' || req.url !== '/')
      return fail(res, 'InvalidAction', 'The action is not found.');
    const authError = checkAuth(req, rawBody, record);
    if (authError) return fail(res, ...authError);
    if (req.headers['x-tc-action'] !== 'ChatCompletions')
      return fail(res, 'InvalidAction', 'The action is not found.');
    if (req.headers['x-tc-version'] !== '2023-09-01')
      return fail(
        res,
        'NoSuchVersion',
        `The API version \`${String(req.headers['x-tc-version'])}\` does not exist.`,
      );
    if (!body) return fail(res, 'InvalidParameter', 'The request body is not valid JSON.');

    const model = typeof body.Model === 'string' ? body.Model : '';
    if (!MODELS.has(model)) return fail(res, 'InvalidParameterValue.Model', '模型不存在');
    const messages = Array.isArray(body.Messages) ? (body.Messages as Obj[]) : [];
    const turns = messages[0]?.Role === 'system' ? messages.slice(1) : messages;
    const valid =
      turns.length % 2 === 1 &&
      turns.every(
        (m, i) =>
          m.Role === (i % 2 === 0 ? 'user' : 'assistant') &&
          typeof m.Content === 'string' &&
          m.Content !== '',
      );
    if (!valid)
      return fail(
        res,
        'InvalidParameter',
        'Messages 中 system 角色必须位于列表的最开始，user 和 assistant 需交替出现，以 user 提问开始和结束。',
      );

    const rule = takeRule(model);
    if (rule?.respond.body !== undefined || rule?.respond.status) {
      res.writeHead(rule.respond.status ?? 200, { 'content-type': 'application/json' });
      res.end(rule.respond.body ?? '');
      return;
    }
    if (rule?.respond.error) return fail(res, rule.respond.error.Code, rule.respond.error.Message);

    const content = rule?.respond.content ?? `Hello from ${model}`;
    const prompt = rule?.respond.usage?.PromptTokens ?? messages.reduce((n, m) => n + words(m.Content), 0);
    const completion = rule?.respond.usage?.CompletionTokens ?? words(content);
    const Usage = { PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion };
    const Id = randomUUID();
    const Created = Math.floor(Date.now() / 1000);
    const Note = '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记';
    if (body.Stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pieces = content.split(/(?<= )/);
      pieces.forEach((piece, i) => {
        const last = i === pieces.length - 1;
        const frame = {
          Note,
          Choices: [{ Delta: { Role: 'assistant', Content: piece }, FinishReason: last ? 'stop' : '' }],
          Created,
          Id,
          Usage: last
            ? Usage
            : { PromptTokens: prompt, CompletionTokens: i + 1, TotalTokens: prompt + i + 1 },
        };
        res.write(`data: ${JSON.stringify(frame)}\n\n`);
      });
      res.end();
      return;
    }
    return reply(res, {
      Note,
      Choices: [{ FinishReason: 'stop', Message: { Role: 'assistant', Content: content } }],
      Created,
      Id,
      Usage,
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
