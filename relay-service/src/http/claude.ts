/**
 * The Claude front (gateway-behaviour §1.1 `/v1/messages`): Claude Code and the Anthropic SDK call the relay in
 * their own format. The key comes as `x-api-key` or Bearer; `anthropic-version` / `anthropic-beta` are passed
 * on to Claude channels; any other chat channel is reached through the chat bridge. Errors use Claude's
 * envelope `{"type":"error","error":{"type","message"}}` so the SDK raises its typed errors.
 */
import type { Context, Hono } from 'hono';
import { RelayError } from '../core/errors.ts';
import { countPromptTokens } from '../core/tokenize.ts';
import type { ApiFront, FrontError } from './fronts.ts';
import {
  callerAuthenticator,
  checkJsonDepth,
  clientIp,
  modelsForCaller,
  type RelayServices,
} from './openai.ts';
import { checkShape } from './shape.ts';

/** Claude's error type for an HTTP status (https://docs.anthropic.com/en/api/errors). */
export function claudeErrorType(status: number): string {
  if (status === 413) return 'request_too_large';
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

export function claudeError(
  err: FrontError & { retryAfterMs?: number | undefined; requestId?: string },
): Response {
  const headers = new Headers();
  if (err.retryAfterMs !== undefined)
    headers.set('retry-after', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
  if (err.requestId) headers.set('request-id', err.requestId);
  return Response.json(
    { type: 'error', error: { type: claudeErrorType(err.status), message: err.message } },
    { status: err.status, headers },
  );
}

export const isClaudePath = (pathname: string) =>
  pathname === '/v1/messages' || pathname.startsWith('/v1/messages/');

/** A Claude SDK listing models: it sends anthropic-version (and the key as x-api-key or Bearer). */
const isClaudeClient = (c: Context) => c.req.header('anthropic-version') !== undefined;

export function createClaudeFront(services: RelayServices): ApiFront {
  const authenticate = callerAuthenticator(services);

  async function body(c: Context): Promise<Record<string, unknown>> {
    let json: unknown;
    try {
      json = await c.req.raw.json();
    } catch {
      throw new RelayError({
        status: 400,
        message: 'the request body is not valid JSON',
        type: 'invalid_request_error',
      });
    }
    if (!json || typeof json !== 'object' || Array.isArray(json))
      throw new RelayError({
        status: 400,
        message: 'the request body must be a JSON object',
        type: 'invalid_request_error',
      });
    checkJsonDepth(json);
    const b = json as Record<string, unknown>;
    if (typeof b.model !== 'string' || !b.model)
      throw new RelayError({ status: 400, message: 'model: Field required', type: 'invalid_request_error' });
    if (!Array.isArray(b.messages))
      throw new RelayError({
        status: 400,
        message: 'messages: Field required',
        type: 'invalid_request_error',
      });
    return b;
  }

  const fail = (err: unknown, requestId?: string) => {
    if (err instanceof RelayError)
      return claudeError({ ...err, message: err.message, ...(requestId ? { requestId } : {}) });
    throw err;
  };

  return {
    name: 'claude',
    owns: isClaudePath,
    error: (e) => claudeError(e),
    mount(app: Hono) {
      app.post('/v1/messages', async (c) => {
        try {
          const b = await body(c);
          if (typeof b.max_tokens !== 'number' || b.max_tokens < 1)
            throw new RelayError({
              status: 400,
              message: 'max_tokens: Field required',
              type: 'invalid_request_error',
            });
          checkShape('messages', b);
          const model = b.model as string;
          const caller = await authenticate(c, model);
          const result = await services.core.relay({
            endpoint: 'messages',
            model,
            stream: b.stream === true,
            body: b,
            caller,
            clientHeaders: c.req.raw.headers,
            clientIp: clientIp(c, services.clientIp),
            signal: c.req.raw.signal,
          });
          return new Response(result.body, { status: result.status, headers: result.headers });
        } catch (err) {
          return fail(err);
        }
      });

      // Claude Code asks for token counts before sending; answered locally, nothing billed.
      app.post('/v1/messages/count_tokens', async (c) => {
        try {
          const b = await body(c);
          await authenticate(c, b.model as string);
          return c.json({ input_tokens: await countPromptTokens('messages', b, b.model as string) });
        } catch (err) {
          return fail(err);
        }
      });

      app.get('/v1/models', async (c, next) => {
        if (!isClaudeClient(c)) return next();
        try {
          const ids = modelsForCaller(services, await authenticate(c, null));
          return c.json({
            data: ids.map((id) => ({
              type: 'model',
              id,
              display_name: id,
              created_at: '2024-01-01T00:00:00Z',
            })),
            has_more: false,
            first_id: ids[0] ?? null,
            last_id: ids.at(-1) ?? null,
          });
        } catch (err) {
          return fail(err);
        }
      });
    },
  };
}
