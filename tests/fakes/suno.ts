/**
 * A fake Suno-API proxy (the upstream new-api's Suno channels, type 36, reach) on loopback, following its wire
 * format:
 * - auth: `Authorization: Bearer <secret>` (else 401 `{"code":"unauthorized","message":...,"data":null}`);
 * - `POST /suno/submit/{music,lyrics}` answers `{"code":"success","message":"","data":"<task id>"}`, or a refusal
 *   set by `refuseNext` (e.g. HTTP 400 `{"code":"prompt_banned",...}`), in which case no task is created;
 * - `POST /suno/fetch {"ids":[...],"action":""}` answers `{"code":"success","data":[task...]}` with each known task
 *   `{task_id, action, status, fail_reason, submit_time, start_time, finish_time, data}` (times in unix seconds);
 *   `GET /suno/fetch/{id}` answers one;
 * - tasks progress with time: SUBMITTED, then IN_PROGRESS after a quarter of `durationMs` (`data` holds the clips
 *   as they stream, or the lyrics), then SUCCESS with audio URLs; `fail(id, reason)` (or a prompt containing
 *   "--fail") makes it FAILURE at its next read; `forget(id)` makes the proxy lose it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeSunoTask = {
  task_id: string;
  action: 'MUSIC' | 'LYRICS';
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  data: unknown;
  prompt: string;
  createdMs: number;
  failWith: string | null;
};

export type FakeSuno = {
  url: string;
  secret: string;
  requests: { method: string; path: string; body: Record<string, unknown> | null }[];
  tasks: Map<string, FakeSunoTask>;
  /** The next `n` submits get this HTTP status and body (no task is created); null stops refusing. */
  refuseNext(answer: { status: number; code: string; message: string } | null, n?: number): void;
  fail(id: string, reason: string): void;
  forget(id: string): void;
  close(): Promise<void>;
};

export async function startFakeSuno(opts: { durationMs?: number; secret?: string } = {}): Promise<FakeSuno> {
  const durationMs = opts.durationMs ?? 1_000;
  const secret = opts.secret ?? 'suno-secret';
  const tasks = new Map<string, FakeSunoTask>();
  const requests: FakeSuno['requests'] = [];
  let refusal: { status: number; code: string; message: string } | null = null;
  let refusals = 0;
  let seq = 0;

  const sec = (ms: number) => Math.floor(ms / 1000);

  /** Moves a task along with time; a task marked to fail fails at its next read. */
  const step = (t: FakeSunoTask) => {
    if (t.status === 'SUCCESS' || t.status === 'FAILURE') return;
    const now = Date.now();
    if (t.failWith !== null) {
      t.status = 'FAILURE';
      t.fail_reason = t.failWith;
      t.finish_time = sec(now);
      return;
    }
    const age = now - t.createdMs;
    if (age >= durationMs) {
      t.status = 'SUCCESS';
      t.finish_time = sec(now);
      t.start_time ||= sec(now);
      t.data =
        t.action === 'LYRICS'
          ? { id: t.task_id, status: 'complete', title: 'Song', text: `[Verse]\n${t.prompt}` }
          : [1, 2].map((i) => ({
              id: `${t.task_id}-clip${i}`,
              status: 'complete',
              audio_url: `https://cdn.example/${t.task_id}-${i}.mp3`,
              image_url: `https://cdn.example/${t.task_id}-${i}.png`,
              title: 'Song',
              metadata: { prompt: t.prompt },
            }));
    } else if (age >= durationMs / 4) {
      t.status = 'IN_PROGRESS';
      t.start_time ||= sec(now);
      t.data =
        t.action === 'LYRICS'
          ? null
          : [1, 2].map((i) => ({ id: `${t.task_id}-clip${i}`, status: 'streaming', audio_url: '' }));
    }
  };

  const view = (t: FakeSunoTask) => {
    step(t);
    const { prompt: _p, createdMs: _c, failWith: _f, ...wire } = t;
    return wire;
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const readBody = async (req: IncomingMessage): Promise<Record<string, unknown> | null> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return null;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = req.method === 'POST' ? await readBody(req) : null;
    requests.push({ method: req.method ?? '', path, body });
    if (req.headers.authorization !== `Bearer ${secret}`)
      return send(res, 401, { code: 'unauthorized', message: 'invalid key', data: null });
    const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(path);
    if (req.method === 'POST' && submit) {
      if (!body) return send(res, 400, { code: 'invalid_request', message: 'bad json', data: null });
      if (refusal && refusals > 0) {
        refusals--;
        const r = refusal;
        if (refusals === 0) refusal = null;
        return send(res, r.status, { code: r.code, message: r.message, data: null });
      }
      const prompt = String(body.prompt ?? body.gpt_description_prompt ?? '');
      const now = Date.now();
      const id = `suno-${process.pid}-${++seq}-${now}`;
      tasks.set(id, {
        task_id: id,
        action: submit[1] === 'music' ? 'MUSIC' : 'LYRICS',
        status: 'SUBMITTED',
        fail_reason: '',
        submit_time: sec(now),
        start_time: 0,
        finish_time: 0,
        data: null,
        prompt,
        createdMs: now,
        failWith: prompt.includes('--fail') ? 'the prompt asked to fail' : null,
      });
      return send(res, 200, { code: 'success', message: '', data: id });
    }
    if (req.method === 'POST' && path === '/suno/fetch') {
      const ids = Array.isArray(body?.ids) ? (body.ids as unknown[]) : [];
      const out = ids.flatMap((id) => {
        const t = typeof id === 'string' ? tasks.get(id) : undefined;
        return t ? [view(t)] : [];
      });
      return send(res, 200, { code: 'success', message: '', data: out });
    }
    const one = /^\/suno\/fetch\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && one) {
      const t = tasks.get(decodeURIComponent(one[1]!));
      if (!t) return send(res, 404, { code: 'task_not_exist', message: 'task_not_exist', data: null });
      return send(res, 200, { code: 'success', message: '', data: view(t) });
    }
    send(res, 404, { code: 'not_found', message: `no route ${path}`, data: null });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => send(res, 500, { code: 'error', message: String(e), data: null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    secret,
    requests,
    tasks,
    refuseNext(answer, n = 1) {
      refusal = answer;
      refusals = answer ? n : 0;
    },
    fail(id, reason) {
      const t = tasks.get(id);
      if (t) t.failWith = reason;
    },
    forget(id) {
      tasks.delete(id);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
