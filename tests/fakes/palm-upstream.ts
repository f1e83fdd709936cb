/**
 * A fake of Google's PaLM 2 API (generativelanguage v1beta2, `models/{model}:generateMessage`) for relay tests.
 * The key as `x-goog-api-key` or `?key=`; Google's `{"error":{"code","message","status","details"}}` envelope (a
 * wrong key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID, a missing one 403 PERMISSION_DENIED). A body
 * without `prompt.messages` is 400 INVALID_ARGUMENT, as is an unknown top-level field (Google rejects those).
 *
 * Deterministic: the answer is "Hello from <model>" (`candidateCount` candidates, author "1"); the reply echoes
 * the prompt messages and has `filters: []`. No usage (PaLM reports none). Rules (`on`) may replace the content,
 * filter the answer (no candidates, `filters:[{reason, message}]`) or answer an error; the first matching rule
 * wins and `times` counts it down.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type PalmRule = {
  respond: {
    content?: string;
    /** Blocks the answer: no candidates, one filter with this reason (OTHER, SAFETY). */
    filterReason?: string;
    /** An error answer: HTTP status, Google status and message. */
    error?: { code: number; status: string; message: string };
  };
  times?: number;
};

export type PalmRequest = { path: string; search: string; headers: Record<string, string>; body: Obj | null };

export type FakePalm = {
  url: string;
  requests: PalmRequest[];
  on(rule: PalmRule): void;
  reset(): void;
  close(): Promise<void>;
};

const FIELDS = new Set(['prompt', 'temperature', 'candidateCount', 'topP', 'topK']);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakePalm(opts: { keys?: string[] } = {}): Promise<FakePalm> {
  const requests: PalmRequest[] = [];
  let rules: PalmRule[] = [];

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
    requests.push({ path: url.pathname, search: url.search, headers, body });
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(payload));
    };
    const error = (code: number, status: string, message: string, reason?: string) =>
      send(code, {
        error: {
          code,
          message,
          status,
          ...(reason
            ? {
                details: [
                  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' },
                ],
              }
            : {}),
        },
      });

    const match = /^\/v1beta2\/models\/([^/:]+):generateMessage$/.exec(url.pathname);
    if (req.method !== 'POST' || !match) return error(404, 'NOT_FOUND', `Method not found: ${url.pathname}`);
    const key = headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (!key)
      return error(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers. Please use API Key.",
      );
    if (opts.keys && !opts.keys.includes(key))
      return error(
        400,
        'INVALID_ARGUMENT',
        'API key not valid. Please pass a valid API key.',
        'API_KEY_INVALID',
      );
    if (!body) return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
    if (unknown)
      return error(
        400,
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`,
      );
    const prompt = isObject(body.prompt) ? body.prompt : {};
    const messages = Array.isArray(prompt.messages) ? prompt.messages : [];
    if (messages.length === 0)
      return error(
        400,
        'INVALID_ARGUMENT',
        '* GenerateMessageRequest.prompt.messages: messages must not be empty',
      );

    const rule = rules.find((r) => r.times === undefined || r.times > 0);
    if (rule?.times !== undefined) rule.times--;
    const r = rule?.respond ?? {};
    if (r.error) return error(r.error.code, r.error.status, r.error.message);
    const model = decodeURIComponent(match[1]!);
    if (r.filterReason)
      return send(200, {
        messages,
        filters: [{ reason: r.filterReason, message: 'The message was filtered.' }],
      });
    const n = typeof body.candidateCount === 'number' ? body.candidateCount : 1;
    const content = r.content ?? `Hello from ${model}`;
    return send(200, {
      candidates: Array.from({ length: n }, () => ({ author: '1', content })),
      messages,
      filters: [],
    });
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
