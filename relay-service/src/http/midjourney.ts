/**
 * The Midjourney front (gateway-behaviour §1.1, §6): midjourney-proxy's API as new-api's clients call it, at
 * `/mj/...` and behind the mode prefixes `/mj-fast/mj/...`, `/mj-turbo/mj/...`, `/mj-relax/mj/...` (the prefix is
 * not forwarded). Keys come as `Authorization: Bearer sk-...` or `mj-api-secret` (core/auth.ts extractKey).
 * Errors use new-api's Midjourney envelope `{"description", "type", "code"}`. The work is in tasks/midjourney.
 * `POST /mj/notify/<secret>` is the upstream's callback (no key; the per-task secret instead, ADR 036).
 */
import type { Context, Hono } from 'hono';
import { RelayError } from '../core/errors.ts';
import { NOTIFY_PATH, wellFormedSecret } from '../tasks/midjourney/notify.ts';
import type { MidjourneyPoller } from '../tasks/midjourney/poller.ts';
import {
  type MidjourneyService,
  MjError,
  SUBMIT_KINDS,
  type SubmitKind,
} from '../tasks/midjourney/service.ts';
import { jsonTooDeep, jsonTooDeepMessage } from './body.ts';
import type { ApiFront } from './fronts.ts';
import { isMidjourneyPath, midjourneyError, midjourneyFrontError } from './midjourney-envelope.ts';
import { callerAuthenticator, clientIp, type RelayServices } from './openai.ts';

const MODES = ['mj-fast', 'mj-turbo', 'mj-relax'] as const;

function render(err: unknown): Response {
  if (err instanceof MjError)
    return midjourneyError({
      status: err.status,
      description: err.message,
      type: err.status >= 500 ? 'upstream_error' : 'invalid_request',
      code: err.code,
    });
  if (err instanceof RelayError) {
    const headers = new Headers();
    if (err.retryAfterMs !== undefined)
      headers.set('retry-after', String(Math.ceil(err.retryAfterMs / 1000)));
    return Response.json(
      { description: err.message, type: err.type, code: err.code ?? 4 },
      { status: err.status, headers },
    );
  }
  throw err;
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.raw.json();
  } catch {
    throw new MjError(400, 4, 'the request body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new MjError(400, 4, 'the request body must be a JSON object');
  if (jsonTooDeep(body)) throw new MjError(400, 4, jsonTooDeepMessage());
  return body as Record<string, unknown>;
}

export function createMidjourneyFront(
  services: RelayServices & { midjourney: MidjourneyService; midjourneyPoller: MidjourneyPoller },
): ApiFront {
  const authenticate = callerAuthenticator(services);
  const mj = services.midjourney;

  const submit = async (c: Context, kind: string = c.req.param('kind') as string) => {
    try {
      if (!Object.hasOwn(SUBMIT_KINDS, kind)) throw new MjError(404, 4, `unknown submit action ${kind}`);
      // The key first (a 401 before any complaint about the body); the model limits once the action is known.
      const caller = await authenticate(c, null);
      const body = await jsonBody(c);
      const answer = await mj.submit(kind as SubmitKind, body, caller, clientIp(c, services.clientIp));
      return c.json(answer.body as object, answer.status as 200);
    } catch (err) {
      return render(err);
    }
  };

  const fetchTask = async (c: Context) => {
    try {
      const caller = await authenticate(c, null);
      const task = await mj.fetchTask(caller, c.req.param('id') as string);
      if (!task) throw new MjError(404, 4, 'task_no_found');
      return c.json(task);
    } catch (err) {
      return render(err);
    }
  };

  const list = async (c: Context) => {
    try {
      const caller = await authenticate(c, null);
      const body = await jsonBody(c);
      const ids = Array.isArray(body.ids) ? body.ids.filter((v): v is string => typeof v === 'string') : [];
      if (ids.length > 1000) throw new MjError(400, 4, 'at most 1000 ids');
      return c.json(await mj.listTasks(caller, ids));
    } catch (err) {
      return render(err);
    }
  };

  const imageSeed = async (c: Context) => {
    try {
      const caller = await authenticate(c, null);
      const answer = await mj.imageSeed(caller, c.req.param('id') as string);
      return c.json(answer.body as object, answer.status as 200);
    } catch (err) {
      return render(err);
    }
  };

  const image = async (c: Context) => {
    try {
      return await mj.image(c.req.param('id') as string);
    } catch (err) {
      return render(err);
    }
  };

  // `/mj/notify` without a task's secret (new-api's key-authenticated push): refused whoever calls, since a
  // caller's own key must never let them report their task's outcome (ADR 036).
  const notifyWithoutSecret = (_c: Context) =>
    render(
      new MjError(
        401,
        4,
        'task callbacks are accepted only at the callback URL the gateway gave its upstream for that task',
      ),
    );

  // The upstream's callback (no key: the upstream calls it): heard only with the task's own secret, and then
  // only as a cue to fetch the task from the upstream (poller.ts callback).
  const notify = async (c: Context) => {
    try {
      if (!services.options.get('MjNotifyEnabled'))
        throw new MjError(403, 4, 'task callbacks are disabled (MjNotifyEnabled is off)');
      const secret = c.req.param('secret') as string;
      if (!wellFormedSecret(secret)) throw new MjError(403, 4, 'unknown task callback secret');
      const body = await jsonBody(c);
      const outcome = await services.midjourneyPoller.callback(secret, body);
      switch (outcome.kind) {
        case 'malformed':
          throw new MjError(400, 4, 'the callback body must be a task object with its id');
        case 'refused':
          throw new MjError(403, 4, 'unknown task callback secret');
        case 'unconfirmed':
          throw new MjError(502, 4, 'the task could not be fetched from its upstream; it will be polled');
        case 'applied':
          return c.json({
            code: 1,
            description: 'success',
            result: outcome.mjId,
            properties: { status: outcome.status },
          });
      }
    } catch (err) {
      return render(err);
    }
  };

  return {
    name: 'midjourney',
    owns: isMidjourneyPath,
    error: midjourneyFrontError,
    mount(app: Hono) {
      for (const prefix of ['/mj', ...MODES.map((m) => `/${m}/mj`)]) {
        app.post(`${prefix}/submit/:kind`, (c) => submit(c));
        app.post(`${prefix}/insight-face/swap`, (c) => submit(c, 'insight-face/swap'));
        app.get(`${prefix}/task/:id/fetch`, fetchTask);
        app.post(`${prefix}/task/list-by-condition`, list);
        app.get(`${prefix}/task/:id/image-seed`, imageSeed);
        app.post(`${prefix}/notify`, notifyWithoutSecret);
      }
      app.post(`${NOTIFY_PATH}/:secret`, notify);
      app.get('/mj/image/:id', image);
    },
  };
}
