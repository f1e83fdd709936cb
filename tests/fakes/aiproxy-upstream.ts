/**
 * A fake of aiproxy.io's knowledge-base API for relay tests: `POST /api/library/ask` (`Authorization: Bearer`,
 * body `{model, query, libraryId, stream}`) answering `{success, answer, documents, errCode, message}` or, with
 * `stream: true`, SSE frames `{content, finish, model, documents}` (one per word, the documents on the last,
 * finishing one); and `GET /api/report/getUserOverview` (`Api-Key` header) answering
 * `{success, message, error_code, data:{totalPoints}}`. A wrong key is 401 `{success:false, errCode:401, message}`;
 * an unknown library is a failure inside a 200 (`success:false, errCode:4003`), as aiproxy reports library errors.
 *
 * Deterministic: the answer is "Answer from <libraryId>: <query>", citing the library's documents. Rules (`on`)
 * may replace the answer or answer an error inside a 200; `times` counts them down.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type AIProxyRule = {
  respond: { answer?: string; failure?: { errCode: number; message: string } };
  times?: number;
};
export type AIProxyRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Obj | null;
};
export type FakeAIProxy = {
  url: string;
  requests: AIProxyRequest[];
  on(rule: AIProxyRule): void;
  reset(): void;
  close(): Promise<void>;
};

export const FAKE_LIBRARY_DOCUMENTS = [
  { title: 'Overview', url: 'https://docs.example.com/overview' },
  { title: 'Channels', url: 'https://docs.example.com/channels' },
];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeAIProxy(opts: {
  keys: string[];
  libraries: string[];
  totalPoints?: number;
}): Promise<FakeAIProxy> {
  const requests: AIProxyRequest[] = [];
  let rules: AIProxyRule[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    let body: Obj | null = null;
    try {
      const v = text ? JSON.parse(text) : null;
      body = isObject(v) ? v : null;
    } catch {
      body = null;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    requests.push({ method: req.method ?? 'GET', path: url.pathname, headers, body });
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };

    if (req.method === 'GET' && url.pathname === '/api/report/getUserOverview') {
      if (!opts.keys.includes(headers['api-key'] ?? ''))
        return send(200, { success: false, message: 'invalid api key', error_code: 401, data: null });
      return send(200, {
        success: true,
        message: '',
        error_code: 0,
        data: { totalPoints: opts.totalPoints ?? 0 },
      });
    }
    if (req.method !== 'POST' || url.pathname !== '/api/library/ask')
      return send(404, { success: false, errCode: 404, message: 'not found' });
    const auth = headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !opts.keys.includes(auth.slice(7)))
      return send(401, { success: false, errCode: 401, message: 'invalid api key' });
    const query = typeof body?.query === 'string' ? body.query : '';
    const libraryId = typeof body?.libraryId === 'string' ? body.libraryId : '';
    if (!query)
      return send(200, {
        success: false,
        answer: '',
        documents: [],
        errCode: 4001,
        message: 'query is required',
      });
    const rule = rules.find((r) => r.times === undefined || r.times > 0);
    if (rule?.times !== undefined) rule.times--;
    const failure =
      rule?.respond.failure ??
      (opts.libraries.includes(libraryId) ? undefined : { errCode: 4003, message: 'library not found' });
    if (failure) return send(200, { success: false, answer: '', documents: [], ...failure });
    const answer = rule?.respond.answer ?? `Answer from ${libraryId}: ${query}`;
    const model = typeof body?.model === 'string' ? body.model : '';
    if (body?.stream !== true)
      return send(200, { success: true, answer, documents: FAKE_LIBRARY_DOCUMENTS, errCode: 0, message: '' });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const word of answer.split(/(?<= )/))
      res.write(`data: ${JSON.stringify({ content: word, finish: false, model, documents: [] })}\n\n`);
    res.end(
      `data: ${JSON.stringify({ content: '', finish: true, model, documents: FAKE_LIBRARY_DOCUMENTS })}\n\n`,
    );
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
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
