/**
 * The OpenAI-compatible front (gateway-behaviour §1.1): parses each endpoint's request into a RelayCall,
 * authenticates the key, and renders results and errors in OpenAI's envelope so the official SDKs work
 * unchanged. Pipeline logic lives in core/; this file only speaks HTTP.
 */

import type { OptionService } from '@switchyard/db/options/service.ts';
import type { Context, Hono } from 'hono';
import {
  type Accounts,
  type Caller,
  checkModelLimit,
  checkToken,
  extractKey,
  parseKey,
} from '../core/auth.ts';
import type { Catalog } from '../core/catalog.ts';
import { RelayError } from '../core/errors.ts';
import type { RelayCall, RelayCore, RelayResult } from '../core/relay.ts';
import type { Endpoint } from '../providers/types.ts';
import type { ConnInfo } from '../runtime.ts';
import type { RelayStore } from '../store/types.ts';
import { jsonTooDeep, jsonTooDeepMessage } from './body.ts';
import type { ClientIpResolver } from './client-ip.ts';
import type { ApiFront } from './fronts.ts';
import { checkShape } from './shape.ts';

export type RelayServices = {
  core: RelayCore;
  accounts: Accounts;
  catalog: Catalog;
  options: OptionService;
  store: RelayStore;
  /** The client address from the peer and headers (TRUST_PROXY, the console's signed hop); else the peer. */
  clientIp?: ClientIpResolver;
  now?: () => number;
};

type Route = { path: string; endpoint: Endpoint; multipart?: boolean; defaultModel?: string };

const ROUTES: Route[] = [
  { path: '/v1/chat/completions', endpoint: 'chat' },
  { path: '/v1/completions', endpoint: 'completions' },
  { path: '/v1/embeddings', endpoint: 'embeddings' },
  { path: '/v1/images/generations', endpoint: 'images', defaultModel: 'dall-e-2' },
  { path: '/v1/images/edits', endpoint: 'imageEdits', multipart: true, defaultModel: 'dall-e-2' },
  { path: '/v1/audio/speech', endpoint: 'speech', defaultModel: 'tts-1' },
  {
    path: '/v1/audio/transcriptions',
    endpoint: 'transcriptions',
    multipart: true,
    defaultModel: 'whisper-1',
  },
  { path: '/v1/audio/translations', endpoint: 'translations', multipart: true, defaultModel: 'whisper-1' },
  { path: '/v1/moderations', endpoint: 'moderations', defaultModel: 'text-moderation-latest' },
  { path: '/v1/rerank', endpoint: 'rerank' },
  { path: '/v1/responses', endpoint: 'responses' },
];

/** Gemini's OpenAI-compatible prefix (https://ai.google.dev/gemini-api/docs/openai) for an OpenAI `/v1/...` path. */
export const geminiOpenAiPath = (v1Path: string): string => v1Path.replace(/^\/v1\//, '/v1beta/openai/');

const NOT_IMPLEMENTED = ['/v1/images/variations', '/v1/files', '/v1/fine-tunes', '/v1/fine_tuning'];

export function openAiError(err: {
  status: number;
  message: string;
  type: string;
  code?: string | null;
  param?: string | null;
  retryAfterMs?: number | undefined;
  requestId?: string;
}): Response {
  const headers = new Headers();
  if (err.retryAfterMs !== undefined)
    headers.set('retry-after', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
  if (err.requestId) headers.set('x-request-id', err.requestId);
  const message = err.requestId ? `${err.message} (request id: ${err.requestId})` : err.message;
  return Response.json(
    { error: { message, type: err.type, param: err.param ?? null, code: err.code ?? null } },
    { status: err.status, headers },
  );
}

function render(result: RelayResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

/**
 * The client address from trusted hops only (ADR 015, http/client-ip.ts): the socket peer unless it is a
 * configured proxy, or the console's forwarding vouches for the address with its HMAC.
 */
export function clientIp(c: Context, resolve?: ClientIpResolver): string {
  const peer = (c.env as ConnInfo | undefined)?.remoteAddress ?? '';
  return resolve ? resolve(peer, c.req.raw.headers) : peer.replace(/^::ffff:/, '');
}

/** A parsed JSON body nested deeper than MAX_JSON_DEPTH is refused (400) before anything walks it. */
export function checkJsonDepth(body: unknown): void {
  if (jsonTooDeep(body))
    throw new RelayError({ status: 400, message: jsonTooDeepMessage(), type: 'invalid_request_error' });
}

export function createOpenAiFront(services: RelayServices): ApiFront {
  const authenticate = callerAuthenticator(services);

  async function parseBody(c: Context, route: Route): Promise<Record<string, unknown> | FormData> {
    if (route.multipart) {
      try {
        return await c.req.raw.formData();
      } catch {
        throw new RelayError({
          status: 400,
          message: 'expected a multipart/form-data body',
          type: 'invalid_request_error',
        });
      }
    }
    let body: unknown;
    try {
      body = await c.req.raw.json();
    } catch {
      throw new RelayError({
        status: 400,
        message: 'the request body is not valid JSON',
        type: 'invalid_request_error',
      });
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new RelayError({
        status: 400,
        message: 'the request body must be a JSON object',
        type: 'invalid_request_error',
      });
    checkJsonDepth(body);
    return body as Record<string, unknown>;
  }

  async function handle(c: Context, route: Route, pathModel?: string): Promise<Response> {
    let requestId: string | undefined;
    try {
      const body = await parseBody(c, route);
      if (!(body instanceof FormData)) checkShape(route.endpoint, body);
      const fieldModel = body instanceof FormData ? body.get('model') : body.model;
      const model =
        pathModel ?? (typeof fieldModel === 'string' && fieldModel ? fieldModel : route.defaultModel);
      if (!model)
        throw new RelayError({
          status: 400,
          message: 'model is required',
          type: 'invalid_request_error',
          param: 'model',
        });
      const caller = await authenticate(c, model);
      const call: RelayCall = {
        endpoint: route.endpoint,
        model,
        stream: !(body instanceof FormData) && body.stream === true,
        body,
        caller,
        clientHeaders: c.req.raw.headers,
        clientIp: clientIp(c, services.clientIp),
        signal: c.req.raw.signal,
      };
      const result = await services.core.relay(call);
      requestId = result.requestId;
      return render(result);
    } catch (err) {
      if (err instanceof RelayError)
        return openAiError({ ...err, message: err.message, ...(requestId ? { requestId } : {}) });
      throw err;
    }
  }

  const modelsFor = (caller: Caller) => modelsForCaller(services, caller);

  const modelObject = (id: string) => ({ id, object: 'model', created: 1626777600, owned_by: 'switchyard' });

  return {
    name: 'openai',
    owns: () => true,
    error: (e) => openAiError(e),
    mount(app: Hono) {
      for (const route of ROUTES) {
        app.post(route.path, (c) => handle(c, route));
        // Gemini's OpenAI-compatible API (a client with baseURL <relay>/v1beta/openai/): the same endpoints.
        app.post(geminiOpenAiPath(route.path), (c) => handle(c, route));
      }
      app.post('/v1/engines/:model/embeddings', (c) =>
        handle(c, { path: '', endpoint: 'embeddings' }, c.req.param('model')),
      );
      for (const p of NOT_IMPLEMENTED)
        app.all(`${p}/*`, () =>
          openAiError({
            status: 501,
            message: 'API not implemented',
            type: 'new_api_error',
            code: 'api_not_implemented',
          }),
        );
      for (const p of NOT_IMPLEMENTED)
        app.all(p, () =>
          openAiError({
            status: 501,
            message: 'API not implemented',
            type: 'new_api_error',
            code: 'api_not_implemented',
          }),
        );
      // The realtime API is a WebSocket (realtime/gateway.ts takes the upgrade before any route); a plain GET
      // is told so.
      app.get('/v1/realtime', () =>
        openAiError({
          status: 426,
          message:
            'the realtime API needs a WebSocket upgrade (GET /v1/realtime?model=... with Upgrade: websocket)',
          type: 'invalid_request_error',
          code: 'websocket_required',
        }),
      );
      app.delete('/v1/models/:model', () =>
        openAiError({
          status: 501,
          message: 'API not implemented',
          type: 'new_api_error',
          code: 'api_not_implemented',
        }),
      );

      const listModels = async (c: Context) => {
        try {
          const caller = await authenticate(c, null);
          return c.json({ object: 'list', data: modelsFor(caller).map(modelObject) });
        } catch (err) {
          if (err instanceof RelayError) return openAiError(err);
          throw err;
        }
      };
      const getModel = async (c: Context) => {
        try {
          const caller = await authenticate(c, null);
          const id = c.req.param('model') ?? '';
          if (!modelsFor(caller).includes(id))
            return openAiError({
              status: 404,
              message: `The model '${id}' does not exist`,
              type: 'invalid_request_error',
              code: 'model_not_found',
              param: 'model',
            });
          checkModelLimit(caller.token!, id);
          return c.json(modelObject(id));
        } catch (err) {
          if (err instanceof RelayError) return openAiError(err);
          throw err;
        }
      };
      app.get('/v1/models', listModels);
      app.get('/v1/models/:model', getModel);
      app.get(geminiOpenAiPath('/v1/models'), listModels);
      app.get(geminiOpenAiPath('/v1/models/:model'), getModel);

      // OpenAI's legacy balance endpoints, with new-api's meaning: the subscription's hard limit is what was
      // granted (remaining + used) and usage is what was used, so a client's "hard limit − usage" is the balance.
      // The token's figures when DisplayTokenStatEnabled, else the user's.
      const figures = async (c: Context) => {
        const cached = await authenticate(c, null);
        // The account cache may be seconds old; these answers show the committed figures.
        if (cached.token) services.accounts.invalidate([], [cached.token.id]);
        const caller = await authenticate(c, null);
        const token = services.options.get('DisplayTokenStatEnabled') ? caller.token : null;
        const used = await services.core.usedQuota(
          token ? { ...caller, token: { ...token, unlimitedQuota: false } } : { ...caller, token: null },
        );
        const remaining = token ? token.remainQuota : caller.user.quota;
        return { token, used, remaining, perUnit: services.options.get('QuotaPerUnit') };
      };
      const subscription = async (c: Context) => {
        try {
          const { token, used, remaining, perUnit } = await figures(c);
          const amount = token?.unlimitedQuota ? 100_000_000 : (remaining + used) / perUnit;
          return c.json({
            object: 'billing_subscription',
            has_payment_method: true,
            soft_limit_usd: amount,
            hard_limit_usd: amount,
            system_hard_limit_usd: amount,
            access_until: token && token.expiredTime > 0 ? token.expiredTime : 0,
          });
        } catch (err) {
          if (err instanceof RelayError) return openAiError(err);
          throw err;
        }
      };
      const usage = async (c: Context) => {
        try {
          const { used, perUnit } = await figures(c);
          return c.json({ object: 'list', total_usage: (used / perUnit) * 100 });
        } catch (err) {
          if (err instanceof RelayError) return openAiError(err);
          throw err;
        }
      };
      app.get('/dashboard/billing/subscription', subscription);
      app.get('/v1/dashboard/billing/subscription', subscription);
      app.get('/dashboard/billing/usage', usage);
      app.get('/v1/dashboard/billing/usage', usage);
    },
  };
}

/** Key → checked caller, shared by every inbound front (OpenAI, Claude, later Gemini). */
export function callerAuthenticator(services: RelayServices) {
  const now = services.now ?? Date.now;
  return async function authenticate(c: Context, model: string | null): Promise<Caller> {
    const url = new URL(c.req.url);
    const raw = extractKey(c.req.raw.headers, url);
    if (!raw)
      throw new RelayError({
        status: 401,
        message: 'no API key provided',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    const { key, channelId } = parseKey(raw);
    const entry = key ? await services.accounts.lookup(key, now()) : null;
    if (!entry)
      throw new RelayError({
        status: 401,
        message: 'invalid API key',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    return checkToken(
      entry,
      { ip: clientIp(c, services.clientIp), now: now(), pinnedChannelId: channelId, model },
      {
        usableGroups: services.options.get('UserUsableGroups'),
        groupRatio: services.options.get('GroupRatio'),
      },
    );
  };
}

/** The models a caller may use: the token's model limits, else every model routable in its group. */
export function modelsForCaller(services: RelayServices, caller: Caller): string[] {
  if (caller.token?.modelLimitsEnabled) return caller.token.modelLimits;
  return services.catalog.snapshot.modelsByGroup.get(caller.group) ?? [];
}
