/**
 * A fake of Cloudflare Workers AI's OpenAI-compatible endpoints for relay tests:
 * `POST /client/v4/accounts/{account_id}/ai/v1/{chat/completions,embeddings}` with `Authorization: Bearer <token>`.
 * Cloudflare's gatekeeping is faithful: a wrong token gets 401 `{success:false, errors:[{code:10000,
 * message:"Authentication error"}], messages:[], result:null}`, an unknown account or path Cloudflare's 7003 "Could
 * not route" envelope. Behind it the OpenAI fake (openai-upstream.ts) generates the answers (text, streams with
 * include_usage, embeddings, rules), and its errors go out in Cloudflare's envelope (code 5006 bad input, 3040
 * capacity, 3043 internal) as Workers AI sends model errors.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeOpenAI, type FakeRule, startFakeOpenAI } from './openai-upstream.ts';

export type CloudflareRequest = {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
};

export type FakeCloudflare = {
  url: string;
  requests: CloudflareRequest[];
  /** Rules of the OpenAI fake generating the answers (content, usage, status, omitUsage, ...). */
  on(rule: FakeRule): void;
  reset(): void;
  close(): Promise<void>;
};

const envelope = (code: number, message: string) =>
  JSON.stringify({ success: false, errors: [{ code, message }], messages: [], result: null });

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

const ERROR_CODES: Record<number, number> = { 400: 5006, 429: 3040 };

export async function startFakeCloudflare(opts: {
  accountId: string;
  tokens: string[];
}): Promise<FakeCloudflare> {
  const inner: FakeOpenAI = await startFakeOpenAI();
  const requests: CloudflareRequest[] = [];
  const prefix = `/client/v4/accounts/${opts.accountId}/ai/v1`;

  const send = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cf-ray': '8f00000000000000-AMS' });
    res.end(body);
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    let body: Record<string, unknown> | null = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    requests.push({ path: url.pathname, headers, body });

    const token = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!token || !opts.tokens.includes(token))
      return send(res, 401, envelope(10000, 'Authentication error'));
    const task = url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : '';
    if (req.method !== 'POST' || (task !== '/chat/completions' && task !== '/embeddings'))
      return send(
        res,
        400,
        envelope(7003, `Could not route to ${url.pathname}, perhaps your object identifier is invalid?`),
      );

    const upstream = await fetch(`${inner.url}/v1${task}`, {
      method: 'POST',
      headers: { authorization: 'Bearer cf-internal', 'content-type': 'application/json' },
      body: text,
    });
    if (upstream.status >= 400) {
      const err = (await upstream.json().catch(() => ({}))) as { error?: { message?: string } };
      const code = ERROR_CODES[upstream.status] ?? 3043;
      return send(
        res,
        upstream.status,
        envelope(code, `AiError: ${err.error?.message ?? 'Internal server error'}`),
      );
    }
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
    });
    const reader = upstream.body?.getReader();
    for (let r = await reader?.read(); r && !r.done; r = await reader?.read()) res.write(r.value);
    res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (rule) => inner.on(rule),
    reset() {
      inner.reset();
      requests.length = 0;
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await inner.close();
    },
  };
}
