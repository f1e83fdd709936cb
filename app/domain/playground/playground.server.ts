/**
 * The playground's chat call (seed 001 §7 Playground, gateway-behaviour §"/pg/chat/completions"), served by the
 * console because the caller is identified by the console session (ADR 008): session + `New-Api-User`, never a
 * system access token. The relay is asked over gRPC as the console acting for the user in the chosen group; it
 * bills the user (no token quota) and logs the call under the token name `playground-<group>`.
 * Answers follow OpenAI: an event stream of `data: <chunk>` lines ending in `data: [DONE]`, the completion JSON
 * when `stream` is false, and `{error: {message, type, code}}` with an HTTP status on refusal.
 */
import type { AppLoadContext } from '@remix-run/server-runtime';
import { z } from 'zod';
import { type ApiPrincipal, authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { relayFailure } from '#app/domain/relay-errors.server.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import { usableGroups } from '#app/domain/tokens/tokens.server.ts';
import type { RelayErrorCode } from '#app/grpc/relay-client.server.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';

export function openAIError(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
): Response {
  return new Response(JSON.stringify({ error: { message, type, code } }), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}

const invalid = (message: string, code: string | null = null) =>
  openAIError(400, message, 'invalid_request_error', code);

/** HTTP status for each relay client error code (the relay already mapped its HTTP statuses to these). */
const STATUS_OF: Record<RelayErrorCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  resource_exhausted: 429,
  cancelled: 499,
  failed: 500,
  upstream_failed: 502,
  unimplemented: 501,
  unavailable: 503,
  deadline_exceeded: 504,
};

/** Fields the playground sends; anything else an OpenAI chat body may carry passes through to the relay. */
export const playgroundSchema = z
  .object({
    model: z.string().trim().min(1, 'model is required').max(128),
    messages: z
      .array(z.object({ role: z.string().min(1), content: z.unknown() }).passthrough())
      .min(1, 'messages must not be empty'),
    stream: z.boolean().optional().default(false),
    group: z.string().trim().max(64).optional().default(''),
    max_tokens: z.number().int().min(0).optional(),
    temperature: z.number().min(0).max(2).optional(),
  })
  .passthrough();

export type PlaygroundBody = z.output<typeof playgroundSchema>;

async function parseBody(request: Request): Promise<PlaygroundBody | Response> {
  let raw: unknown;
  try {
    raw = await request.json();
  } catch {
    return invalid('the request body is not valid JSON');
  }
  const parsed = playgroundSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    return invalid(
      field ? `${field}: ${issue?.message}` : (issue?.message ?? 'invalid request'),
      'invalid_field',
    );
  }
  return parsed.data;
}

/** The event stream of a streamed call; the first chunk was read already so refusals could still be a status. */
function eventStream(
  iterator: AsyncIterator<string>,
  first: IteratorResult<string>,
  relayAddress: string,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const line = (data: string) => encoder.encode(`data: ${data}\n\n`);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) {
        controller.enqueue(line('[DONE]'));
        controller.close();
      } else controller.enqueue(line(first.value));
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          controller.enqueue(line('[DONE]'));
          controller.close();
        } else controller.enqueue(line(next.value));
      } catch (err) {
        // Mid-stream failure: the client appends the error to the reply; no [DONE] so it is not taken as complete.
        const failure = relayFailure(err, relayAddress);
        const message = failure?.message ?? 'internal error';
        controller.enqueue(line(JSON.stringify({ error: { message, type: 'server_error', code: null } })));
        controller.close();
        if (!failure) console.error(err);
      }
    },
    async cancel() {
      // The browser left: cancelling the gRPC stream makes the relay stop the upstream and bill what was produced.
      await iterator.return?.();
    },
  });
}

/** A refusal before or instead of an answer, in OpenAI's error shape plus the HTTP status. */
export type PlaygroundRefusal = { status: number; message: string; type: string; code: string | null };

/** One playground call, validated and ready for the relay. */
type PreparedCall = {
  relay: NonNullable<ConsoleServices['relay']>;
  caller: { userId: number; group: string };
  payload: string;
  ip: string;
  stream: boolean;
};

/** The checks both the JSON call and the page make: the group is the user's to use, a relay is configured. */
function prepare(
  services: ConsoleServices,
  user: SessionUser,
  body: PlaygroundBody,
  ip: string,
): PreparedCall | PlaygroundRefusal {
  const group = body.group || user.group;
  const groups = usableGroups({ options: services.options, actor: user });
  if (group !== user.group && !(group in groups))
    return {
      status: 403,
      message: `group ${group} is not usable by this user`,
      type: 'invalid_request_error',
      code: 'group_not_usable',
    };
  const relay = services.relay;
  if (!relay)
    return { status: 503, message: 'the relay service is not configured', type: 'server_error', code: null };
  const { group: _group, max_tokens, ...rest } = body;
  // max_tokens 0 is the playground's "no limit".
  const payload = JSON.stringify({ ...rest, ...(max_tokens ? { max_tokens } : {}) });
  return { relay, caller: { userId: user.id, group }, payload, ip, stream: body.stream };
}

/** A relay error as a refusal; anything else is logged and answered as a JSON 500, never a plain-text page. */
function relayRefusal(err: unknown, relayAddress: string): PlaygroundRefusal {
  const failure = relayFailure(err, relayAddress);
  if (!failure) {
    console.error(err);
    return { status: 500, message: 'internal error', type: 'server_error', code: null };
  }
  const status = STATUS_OF[failure.code];
  return {
    status,
    message: failure.message,
    type: status < 500 ? 'invalid_request_error' : 'server_error',
    code: null,
  };
}

const refusalResponse = (r: PlaygroundRefusal) => openAIError(r.status, r.message, r.type, r.code);

/**
 * The playground call without streaming, for the page's form (no JavaScript): the completion JSON the relay
 * answered, or the refusal (the user's group, no relay, every relay error: unknown model, no channel, no quota,
 * the upstream's failure). Billed and logged exactly as POST /pg/chat/completions.
 */
export async function playgroundComplete(
  services: ConsoleServices,
  user: SessionUser,
  body: PlaygroundBody,
  ip: string,
  signal?: AbortSignal,
): Promise<{ ok: true; json: string } | { ok: false; refusal: PlaygroundRefusal }> {
  const call = prepare(services, user, { ...body, stream: false }, ip);
  if (!('relay' in call)) return { ok: false, refusal: call };
  try {
    return {
      ok: true,
      json: await call.relay.chatCompletion(call.caller, call.payload, call.ip, { signal }),
    };
  } catch (err) {
    return { ok: false, refusal: relayRefusal(err, call.relay.address) };
  }
}

/** POST /pg/chat/completions */
export async function playgroundChat(request: Request, context: AppLoadContext): Promise<Response> {
  if (request.method !== 'POST') return new Response(null, { status: 405, headers: { Allow: 'POST' } });
  const services = getServices(context);
  let principal: ApiPrincipal;
  try {
    principal = await authenticateApi(request, services);
  } catch (err) {
    if (isDomainError(err)) return openAIError(err.status, err.message, 'invalid_request_error');
    throw err;
  }
  if (principal.via !== 'session')
    return openAIError(
      403,
      'the playground takes the console session; access tokens are not supported',
      'invalid_request_error',
      'access_token_not_supported',
    );
  const body = await parseBody(request);
  if (body instanceof Response) return body;

  const ip = clientIp(request, services);
  if (!body.stream) {
    const answer = await playgroundComplete(services, principal.user, body, ip, request.signal);
    if (!answer.ok) return refusalResponse(answer.refusal);
    return new Response(answer.json, {
      status: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
    });
  }

  const call = prepare(services, principal.user, body, ip);
  if (!('relay' in call)) return refusalResponse(call);
  const { relay } = call;
  const iterator = relay
    .streamChatCompletion(call.caller, call.payload, call.ip, { signal: request.signal })
    [Symbol.asyncIterator]();
  let first: IteratorResult<string>;
  try {
    first = await iterator.next();
  } catch (err) {
    return refusalResponse(relayRefusal(err, relay.address));
  }
  return new Response(eventStream(iterator, first, relay.address), {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    },
  });
}
