import { isObject } from '../json.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

type Obj = Record<string, unknown>;

/** o1/o3/o4 and gpt-5 (not gpt-5-chat): the reasoning models with their own parameter rules. */
export function isReasoningModel(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1);
  return /^o\d(-|$)/.test(name) || /^gpt-5(?!-chat)/.test(name);
}

const EFFORT_SUFFIX = /-(minimal|low|medium|high)$/;

/**
 * Channel `setting` keys read here (all optional):
 * - `force_stream_options` (default true): add `stream_options.include_usage` to streamed chat/completions so the
 *   upstream reports usage (gateway-behaviour §3.2 FORCE_STREAM_OPTION);
 * - `supports_stream_options` (default true): false removes `stream_options` for upstreams that reject it.
 */
function streamOptions(setting: Obj): { force: boolean; supported: boolean } {
  return {
    force: setting.force_stream_options !== false,
    supported: setting.supports_stream_options !== false,
  };
}

/** Whether the client itself asked for the final usage chunk. */
export function clientWantsStreamUsage(input: RelayInput): boolean {
  if (input.body instanceof FormData) return false;
  const so = input.body.stream_options;
  return isObject(so) && so.include_usage === true;
}

export type OpenAIBody = {
  body: BodyInit;
  /** null for multipart (fetch sets the boundary). */
  contentType: string | null;
  /** The model actually sent (a reasoning-effort suffix is moved into the body). */
  model: string;
};

/**
 * The upstream body of an OpenAI-format call, shared by every OpenAI-compatible adaptor and Azure. The client's
 * body is never mutated: core reuses the same RelayInput for retries on other channels.
 */
export function buildOpenAIBody(channel: ChannelConfig, input: RelayInput): OpenAIBody {
  let model = input.upstreamModel;
  if (input.body instanceof FormData) {
    const form = new FormData();
    for (const [k, v] of input.body.entries()) if (k !== 'model') form.append(k, v);
    form.set('model', model);
    return { body: form, contentType: null, model };
  }

  const body: Obj = { ...input.body };
  if (isReasoningModel(model) && (input.endpoint === 'chat' || input.endpoint === 'responses')) {
    const effort = EFFORT_SUFFIX.exec(model);
    if (effort) {
      model = model.slice(0, effort.index);
      if (input.endpoint === 'chat') body.reasoning_effort ??= effort[1];
      else body.reasoning = { effort: effort[1], ...(isObject(body.reasoning) ? body.reasoning : {}) };
    }
    if (input.endpoint === 'chat') adaptReasoningChat(body, model);
  }

  if (input.stream && (input.endpoint === 'chat' || input.endpoint === 'completions')) {
    const opts = streamOptions(channel.setting);
    if (!opts.supported) delete body.stream_options;
    else if (opts.force) {
      body.stream_options = {
        ...(isObject(body.stream_options) ? body.stream_options : {}),
        include_usage: true,
      };
    }
  }

  Object.assign(body, channel.paramOverride);
  // Set last so that what is billed (the mapped model) is what is sent.
  body.model = model;
  return { body: JSON.stringify(body), contentType: 'application/json', model };
}

/** gateway-behaviour §5: max_tokens → max_completion_tokens, no temperature, system → developer. */
function adaptReasoningChat(body: Obj, model: string): void {
  if (body.max_tokens !== undefined) {
    body.max_completion_tokens ??= body.max_tokens;
    delete body.max_tokens;
  }
  delete body.temperature;
  const name = model.slice(model.lastIndexOf('/') + 1);
  // o1-mini and o1-preview predate the developer role and reject it.
  if (name.startsWith('o1-mini') || name.startsWith('o1-preview')) return;
  if (Array.isArray(body.messages)) {
    body.messages = body.messages.map((m) =>
      isObject(m) && m.role === 'system' ? { ...m, role: 'developer' } : m,
    );
  }
}

export function jsonHeaders(contentType: string | null, stream: boolean): Headers {
  const h = new Headers();
  if (contentType) h.set('Content-Type', contentType);
  // Only streams set Accept: speech answers audio, and some proxies answer 406 to a mismatched Accept.
  if (stream) h.set('Accept', 'text/event-stream');
  return h;
}
