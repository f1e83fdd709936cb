/**
 * The Suno front (gateway-behaviour §1.1, §6): new-api's Suno API, `POST /suno/submit/{music,lyrics}`,
 * `POST /suno/fetch {"ids"}` and `GET /suno/fetch/{id}`, keyed by `Authorization: Bearer sk-...`. Answers and
 * errors use new-api's task envelope `{"code","message","data"}`. The work is in tasks/suno.
 */
import type { Context, Hono } from 'hono';
import { RelayError } from '../core/errors.ts';
import { SUNO_ACTIONS, type SunoAction, SunoError, type SunoService } from '../tasks/suno/service.ts';
import { jsonTooDeep, jsonTooDeepMessage } from './body.ts';
import type { ApiFront } from './fronts.ts';
import { callerAuthenticator, clientIp, type RelayServices } from './openai.ts';
import { isSunoPath, sunoError, sunoFrontError } from './suno-envelope.ts';

function render(err: unknown): Response {
  if (err instanceof SunoError)
    return sunoError({ status: err.status, code: err.code, message: err.message });
  if (err instanceof RelayError) {
    const headers = new Headers();
    if (err.retryAfterMs !== undefined)
      headers.set('retry-after', String(Math.ceil(err.retryAfterMs / 1000)));
    return Response.json(
      { code: String(err.code ?? err.type), message: err.message, data: null },
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
    throw new SunoError(400, 'invalid_request', 'the request body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new SunoError(400, 'invalid_request', 'the request body must be a JSON object');
  if (jsonTooDeep(body)) throw new SunoError(400, 'invalid_request', jsonTooDeepMessage());
  return body as Record<string, unknown>;
}

export function createSunoFront(services: RelayServices & { suno: SunoService }): ApiFront {
  const authenticate = callerAuthenticator(services);
  const suno = services.suno;
  return {
    name: 'suno',
    owns: isSunoPath,
    error: sunoFrontError,
    mount(app: Hono) {
      app.post('/suno/submit/:action', async (c) => {
        try {
          const action = (c.req.param('action') ?? '').toLowerCase();
          if (!Object.hasOwn(SUNO_ACTIONS, action))
            throw new SunoError(
              400,
              'invalid_request',
              `unknown action ${c.req.param('action')}: music or lyrics`,
            );
          const caller = await authenticate(c, null);
          const body = await jsonBody(c);
          const answer = await suno.submit(
            action as SunoAction,
            body,
            caller,
            clientIp(c, services.clientIp),
          );
          return c.json(answer.body as object, answer.status as 200);
        } catch (err) {
          return render(err);
        }
      });
      app.post('/suno/fetch', async (c) => {
        try {
          const caller = await authenticate(c, null);
          const body = await jsonBody(c);
          if (!Array.isArray(body.ids)) throw new SunoError(400, 'invalid_request', 'ids must be a list');
          const ids = body.ids.filter((v): v is string => typeof v === 'string');
          if (ids.length > 1000) throw new SunoError(400, 'invalid_request', 'at most 1000 ids');
          return c.json({ code: 'success', message: '', data: await suno.listTasks(caller, ids) });
        } catch (err) {
          return render(err);
        }
      });
      app.get('/suno/fetch/:id', async (c) => {
        try {
          const caller = await authenticate(c, null);
          const task = await suno.fetchTask(caller, c.req.param('id') as string);
          if (!task) throw new SunoError(404, 'task_not_exist', 'task_not_exist');
          return c.json({ code: 'success', message: '', data: task });
        } catch (err) {
          return render(err);
        }
      });
    },
  };
}
