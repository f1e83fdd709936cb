/**
 * A fake of a self-hosted MokaAI M3E embeddings server (the OpenAI-compatible FastAPI servers m3e is deployed
 * with, e.g. `POST /v1/embeddings`): `Authorization: Bearer <key>` (a wrong key gets FastAPI's 401
 * `{"detail":"Invalid API key"}`), `{model, input: string[]}` → OpenAI's embeddings list with `usage`
 * (prompt_tokens = words of the input). It serves nothing else: any other path is FastAPI's 404
 * `{"detail":"Not Found"}`, and a model it does not host is a 400 `{"detail": ...}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type M3eRequest = {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
};

export type FakeM3e = {
  /** The base URL a channel uses (`http://127.0.0.1:PORT/v1`). */
  url: string;
  requests: M3eRequest[];
  /** The next answer is this status with `{detail}`. */
  failNext(status: number, detail: string): void;
  reset(): void;
  close(): Promise<void>;
};

export const M3E_MODELS = ['m3e-small', 'm3e-base', 'm3e-large'];

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

export async function startFakeM3e(opts: { keys: string[] }): Promise<FakeM3e> {
  const requests: M3eRequest[] = [];
  let failure: { status: number; detail: string } | null = null;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
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
    const key = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!key || !opts.keys.includes(key)) return json(res, 401, { detail: 'Invalid API key' });
    if (req.method !== 'POST' || url.pathname !== '/v1/embeddings')
      return json(res, 404, { detail: 'Not Found' });
    if (failure) {
      const f = failure;
      failure = null;
      return json(res, f.status, { detail: f.detail });
    }
    const model = String(body?.model ?? '');
    if (!M3E_MODELS.includes(model)) return json(res, 400, { detail: `model ${model} is not loaded` });
    const input = Array.isArray(body?.input) ? body.input : null;
    if (!input?.every((s) => typeof s === 'string'))
      return json(res, 422, { detail: 'input must be a list of strings' });
    const tokens = input.reduce((n: number, s: string) => n + words(s), 0);
    json(res, 200, {
      data: input.map((s: string, index: number) => ({
        embedding: [s.length / 256, words(s) / 256, 0.125],
        index,
        object: 'embedding',
      })),
      model,
      object: 'list',
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext(status, detail) {
      failure = { status, detail };
    },
    reset() {
      failure = null;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
