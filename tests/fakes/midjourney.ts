/**
 * A fake midjourney-proxy (novicezk/midjourney-proxy and its Plus fork, as new-api's Midjourney channels reach
 * them) on loopback, following its wire format:
 * - auth: the `mj-api-secret` header must equal the fake's secret (else 401 `{"code":401,...}`);
 * - `POST /mj/submit/{imagine,blend,describe,shorten,action,modal,change,simple-change}` and
 *   `POST /mj/insight-face/swap` (a SWAP_FACE task) answer
 *   `{code, description, result, properties}`: code 1 and the new task id, or a refusal set by `refuseNext`
 *   (e.g. code 24 banned prompt, 30 queue full, 4 unknown task); follow-ups need a known `taskId`;
 * - tasks: `{id, action, customId, prompt, promptEn, description, state, submitTime, startTime, finishTime,
 *   imageUrl, status, progress, failReason, buttons, properties}`; they progress with time: SUBMITTED until a
 *   quarter of `durationMs`, then IN_PROGRESS with progress '25%'..'99%', then SUCCESS '100%' with an image URL
 *   and buttons (U1-U4, V1-V4, reroll on imagine); `fail(id, reason)` (or a prompt containing "--fail") makes it
 *   FAILURE at its next step; `forget(id)` makes the proxy lose it (list and fetch no longer return it);
 * - `GET /mj/task/{id}/fetch`, `POST /mj/task/list-by-condition {"ids": [...]}`, `GET /mj/task/{id}/image-seed`
 *   (`{code: 1, result: "seed-<id>"}`); `GET /attachments/<id>.png` serves the images (no key);
 * - `acceptNext(21 | 22, properties)` answers the next submit with that code (the task is created);
 * - every status change of a task submitted with `notifyHook` is POSTed there as the task object (what
 *   midjourney-proxy does with a submit's notifyHook); `tick(id)` moves a task along by the clock as the proxy's
 *   own progress would (no one asking), and `delivered()` waits for the callbacks in flight.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeMjTask = {
  id: string;
  action: string;
  customId: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  imageUrl: string;
  status: string;
  progress: string;
  failReason: string;
  buttons: { customId: string; emoji: string; label: string; type: number; style: number }[];
  properties: Record<string, unknown>;
};

export type FakeMidjourney = {
  url: string;
  secret: string;
  /** Requests received: method, path (mode prefix included) and parsed body. */
  requests: { method: string; path: string; body: Record<string, unknown> | null }[];
  /** The submit answers sent, in order. */
  submits: { path: string; body: Record<string, unknown>; answer: Record<string, unknown> }[];
  tasks: Map<string, FakeMjTask>;
  /** The next `n` submits get this answer (no task is created); null stops refusing. */
  refuseNext(answer: { code: number; description: string } | null, n?: number): void;
  /** The next submit creates its task but answers this code (21 exists, 22 queued) and properties. */
  acceptNext(code: number, properties?: Record<string, unknown>): void;
  /** The task fails at its next step with this reason. */
  fail(id: string, reason: string): void;
  /** The proxy forgets the task. */
  forget(id: string): void;
  /** Notifications sent: url, the task as sent and the HTTP status the receiver answered (0: unreachable). */
  notified: { url: string; task: FakeMjTask; status?: number }[];
  /** The notifyHook a task was submitted with, if any. */
  hookOf(id: string): string | undefined;
  /** Moves the task along by the clock now (the proxy's own progress), notifying its hook on a change. */
  tick(id: string): void;
  /** Resolves when every notification sent so far has been answered (or failed). */
  delivered(): Promise<void>;
  close(): Promise<void>;
};

const ACTIONS: Record<string, string> = {
  imagine: 'IMAGINE',
  blend: 'BLEND',
  describe: 'DESCRIBE',
  shorten: 'SHORTEN',
  modal: 'MODAL',
  'upload-discord-images': 'UPLOAD',
  'swap-face': 'SWAP_FACE',
};

function actionOfCustomId(customId: string): string {
  if (customId.includes('upsample')) return 'UPSCALE';
  if (customId.includes('reroll')) return 'REROLL';
  if (customId.includes('variation')) return 'VARIATION';
  return 'ACTION';
}

function imagineButtons(id: string) {
  const b = (customId: string, label: string) => ({ customId, emoji: '', label, type: 2, style: 2 });
  return [
    ...[1, 2, 3, 4].map((i) => b(`MJ::JOB::upsample::${i}::${id}`, `U${i}`)),
    b(`MJ::JOB::reroll::0::${id}::SOLO`, ''),
    ...[1, 2, 3, 4].map((i) => b(`MJ::JOB::variation::${i}::${id}`, `V${i}`)),
  ];
}

export async function startFakeMidjourney(
  opts: { secret?: string; durationMs?: number } = {},
): Promise<FakeMidjourney> {
  const secret = opts.secret ?? 'mj-secret';
  const durationMs = opts.durationMs ?? 400;
  const requests: FakeMidjourney['requests'] = [];
  const submits: FakeMidjourney['submits'] = [];
  const tasks = new Map<string, FakeMjTask>();
  const failures = new Map<string, string>();
  const hooks = new Map<string, string>();
  const notified: FakeMidjourney['notified'] = [];
  let refusal: { code: number; description: string; n: number } | null = null;
  let accept: { code: number; properties: Record<string, unknown> } | null = null;
  let seq = 0;
  let url = '';

  const inFlight = new Set<Promise<void>>();
  const notify = (t: FakeMjTask) => {
    const hook = hooks.get(t.id);
    if (!hook) return;
    const entry: FakeMidjourney['notified'][number] = { url: hook, task: { ...t } };
    notified.push(entry);
    const p = fetch(hook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(t),
    })
      .then(async (res) => {
        entry.status = res.status;
        await res.body?.cancel();
      })
      .catch(() => {
        entry.status = 0;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };

  /** Moves a task along by the clock (and to FAILURE when told); notifies on a change of status. */
  const step = (t: FakeMjTask) => {
    if (t.status === 'SUCCESS' || t.status === 'FAILURE') return;
    const before = `${t.status}${t.progress}`;
    const elapsed = Date.now() - t.submitTime;
    const reason =
      failures.get(t.id) ??
      (t.prompt.includes('--fail') && elapsed >= durationMs / 4 ? 'banned prompt' : null);
    if (reason !== null) {
      t.status = 'FAILURE';
      t.failReason = reason;
      t.finishTime = Date.now();
    } else if (elapsed >= durationMs) {
      t.status = 'SUCCESS';
      t.progress = '100%';
      t.finishTime = Date.now();
      t.imageUrl = `${url}/attachments/${t.id}.png`;
      t.promptEn = t.promptEn || t.prompt;
      if (t.action === 'IMAGINE' || t.action === 'VARIATION' || t.action === 'REROLL')
        t.buttons = imagineButtons(t.id);
    } else if (elapsed >= durationMs / 4) {
      if (t.status !== 'IN_PROGRESS') t.startTime = Date.now();
      t.status = 'IN_PROGRESS';
      t.progress = `${Math.min(99, Math.max(25, Math.floor((elapsed / durationMs) * 100)))}%`;
    }
    if (`${t.status}${t.progress}` !== before) notify(t);
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const readBody = async (req: IncomingMessage): Promise<Record<string, unknown> | null> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (chunks.length === 0) return null;
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return null;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = req.method === 'POST' ? await readBody(req) : null;
    requests.push({ method: req.method ?? '', path, body });
    if (path.startsWith('/attachments/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    }
    if (req.headers['mj-api-secret'] !== secret)
      return send(res, 401, { code: 401, description: 'unauthorized' });

    const submit = /^\/mj\/(?:submit\/([a-z-]+)|insight-face\/swap)$/.exec(path);
    if (submit && req.method === 'POST') {
      const kind = submit[1] ?? 'swap-face';
      const b = body ?? {};
      const answer = (a: Record<string, unknown>) => {
        submits.push({ path, body: b, answer: a });
        send(res, 200, a);
      };
      if (refusal) {
        const { code, description } = refusal;
        if (--refusal.n <= 0) refusal = null;
        return answer({ code, description, result: null, properties: {} });
      }
      let action = ACTIONS[kind];
      let prompt = typeof b.prompt === 'string' ? b.prompt : '';
      if (!action) {
        const taskId = typeof b.taskId === 'string' ? b.taskId : String(b.content ?? '').split(' ')[0];
        const original = taskId ? tasks.get(taskId) : undefined;
        if (!original)
          return answer({ code: 4, description: '关联任务不存在或已失效', result: null, properties: {} });
        action =
          kind === 'action'
            ? actionOfCustomId(String(b.customId ?? ''))
            : kind === 'change'
              ? String(b.action ?? 'UPSCALE')
              : 'UPSCALE';
        prompt = original.prompt;
      }
      const id = `${Date.now()}${String(++seq).padStart(4, '0')}`;
      const task: FakeMjTask = {
        id,
        action,
        customId: typeof b.customId === 'string' ? b.customId : '',
        prompt,
        promptEn: '',
        description: `/${kind} ${prompt}`.trim(),
        state: typeof b.state === 'string' ? b.state : '',
        submitTime: Date.now(),
        startTime: 0,
        finishTime: 0,
        imageUrl: '',
        status: 'SUBMITTED',
        progress: '0%',
        failReason: '',
        buttons: [],
        properties: { finalPrompt: prompt },
      };
      tasks.set(id, task);
      if (typeof b.notifyHook === 'string' && b.notifyHook) hooks.set(id, b.notifyHook);
      if (accept) {
        const { code, properties } = accept;
        accept = null;
        const description = code === 22 ? '排队中，前面还有1个任务' : '任务已存在';
        return answer({ code, description, result: id, properties });
      }
      return answer({
        code: 1,
        description: '提交成功',
        result: id,
        properties: { discordInstanceId: 'fake' },
      });
    }
    const seed = /^\/mj\/task\/([^/]+)\/image-seed$/.exec(path);
    if (seed && req.method === 'GET') {
      const t = tasks.get(seed[1]!);
      if (!t) return send(res, 200, { code: 4, description: '任务不存在', result: null, properties: {} });
      return send(res, 200, { code: 1, description: '成功', result: `seed-${t.id}`, properties: {} });
    }
    const fetchOne = /^\/mj\/task\/([^/]+)\/fetch$/.exec(path);
    if (fetchOne && req.method === 'GET') {
      const t = tasks.get(fetchOne[1]!);
      if (!t) return send(res, 404, { code: 404, description: 'task not found' });
      step(t);
      return send(res, 200, t);
    }
    if (path === '/mj/task/list-by-condition' && req.method === 'POST') {
      const ids = Array.isArray(body?.ids) ? (body.ids as unknown[]).map(String) : [...tasks.keys()];
      const out = ids.flatMap((id) => {
        const t = tasks.get(id);
        if (!t) return [];
        step(t);
        return [t];
      });
      return send(res, 200, out);
    }
    send(res, 404, { code: 404, description: `no route ${req.method} ${path}` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { code: 500, description: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    secret,
    requests,
    submits,
    tasks,
    notified,
    hookOf: (id) => hooks.get(id),
    tick(id) {
      const t = tasks.get(id);
      if (t) step(t);
    },
    async delivered() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    refuseNext(answer, n = 1) {
      refusal = answer ? { ...answer, n } : null;
    },
    acceptNext(code, properties = {}) {
      accept = { code, properties };
    },
    fail(id, reason) {
      failures.set(id, reason);
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
