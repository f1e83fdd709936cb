/**
 * A fake Dify server (chat app API, https://docs.dify.ai "Send Chat Message") for relay tests:
 * `POST /v1/chat-messages` with `Authorization: Bearer <app key>` and `{inputs, query, response_mode, user,
 * conversation_id?, files?}`. Blocking answers `{event:'message', task_id, id, message_id, conversation_id, mode,
 * answer, metadata:{usage}, created_at}`; streaming answers SSE `data:` events as Dify frames them
 * (`workflow_started`, one `message` per word, a `ping`, `node_finished`, `message_end` with metadata.usage).
 * Errors are `{code, message, status}`: a wrong key 401 unauthorized, an unknown conversation (or one of another
 * user) 404 "Conversation Not Exists.", a missing query 400 invalid_param.
 *
 * Conversations are kept per user: the answer is "Turn <n> of <conversation>" counting the turns.
 * usage: prompt_tokens = words of the query, completion_tokens = words of the answer. Rules (`on`) may answer an
 * HTTP error or end a stream with an `error` event; `times` counts them down.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type DifyRule = {
  respond: {
    /** An HTTP error `{code, message, status}`. */
    error?: { status: number; code: string; message: string };
    /** A stream ending with an `error` event after the first message event. */
    streamError?: { code: string; message: string };
  };
  times?: number;
};
export type DifyRequest = { path: string; headers: Record<string, string>; body: Obj | null };
export type FakeDify = {
  url: string;
  requests: DifyRequest[];
  on(rule: DifyRule): void;
  reset(): void;
  close(): Promise<void>;
};

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeDify(opts: { keys: string[] }): Promise<FakeDify> {
  const requests: DifyRequest[] = [];
  let rules: DifyRule[] = [];
  /** conversation id → { user, turns } */
  const conversations = new Map<string, { user: string; turns: number }>();
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
    requests.push({ path: url.pathname, headers, body });
    const fail = (status: number, code: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code, message, status }));
    };
    if (req.method !== 'POST' || url.pathname !== '/v1/chat-messages')
      return fail(404, 'not_found', 'Not Found');
    const auth = headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !opts.keys.includes(auth.slice(7)))
      return fail(401, 'unauthorized', 'Access token is invalid');
    const query = typeof body?.query === 'string' ? body.query : '';
    const user = typeof body?.user === 'string' ? body.user : '';
    if (!query) return fail(400, 'invalid_param', 'query is required');
    if (!user) return fail(400, 'invalid_param', 'user is required');
    const rule = rules.find((r) => r.times === undefined || r.times > 0);
    if (rule?.times !== undefined) rule.times--;
    if (rule?.respond.error)
      return fail(rule.respond.error.status, rule.respond.error.code, rule.respond.error.message);

    let conversationId = typeof body?.conversation_id === 'string' ? body.conversation_id : '';
    if (conversationId) {
      const conv = conversations.get(conversationId);
      if (!conv || conv.user !== user) return fail(404, 'not_found', 'Conversation Not Exists.');
      conv.turns++;
    } else {
      conversationId = randomUUID();
      conversations.set(conversationId, { user, turns: 1 });
    }
    const turns = conversations.get(conversationId)!.turns;
    const answer = `Turn ${turns} of ${conversationId}`;
    const messageId = randomUUID();
    const taskId = randomUUID();
    const createdAt = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: words(query),
      prompt_unit_price: '0.001',
      prompt_price: '0.0000100',
      completion_tokens: words(answer),
      completion_unit_price: '0.002',
      completion_price: '0.0000080',
      total_tokens: words(query) + words(answer),
      total_price: '0.0000180',
      currency: 'USD',
      latency: 0.25,
    };
    const base = {
      task_id: taskId,
      message_id: messageId,
      conversation_id: conversationId,
      created_at: createdAt,
    };
    if (body?.response_mode !== 'streaming') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          event: 'message',
          ...base,
          id: messageId,
          mode: 'advanced-chat',
          answer,
          metadata: { usage, retriever_resources: [] },
        }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (payload: Obj) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    event({
      event: 'workflow_started',
      task_id: taskId,
      workflow_run_id: taskId,
      data: { id: taskId, created_at: createdAt },
    });
    const pieces = answer.split(/(?<= )/);
    pieces.forEach((piece, i) => {
      event({ event: 'message', ...base, id: messageId, answer: piece });
      if (i === 0) res.write('event: ping\n\n');
      if (i === 0 && rule?.respond.streamError) {
        event({
          event: 'error',
          task_id: taskId,
          message_id: messageId,
          status: 400,
          ...rule.respond.streamError,
        });
      }
    });
    if (rule?.respond.streamError) return res.end();
    event({
      event: 'node_finished',
      task_id: taskId,
      data: { id: taskId, node_id: 'llm', status: 'succeeded' },
    });
    event({ event: 'message_end', ...base, id: messageId, metadata: { usage, retriever_resources: [] } });
    event({ event: 'workflow_finished', task_id: taskId, data: { id: taskId, status: 'succeeded' } });
    res.end();
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
