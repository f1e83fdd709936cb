/**
 * Dify (channel type 37): an app's chat API, `POST {base}/v1/chat-messages` with the app's key as Bearer (base =
 * the Dify server, default https://api.dify.ai). The request (and how conversations carry over) is built in
 * request.ts. A blocking answer `{event:'message', message_id, conversation_id, answer, metadata:{usage}}` becomes
 * a chat completion whose `id` is the conversation id (as new-api does) with `conversation_id` as an extra field;
 * streams convert in stream.ts. Errors are `{code, message, status}`.
 */
import { isObject, type Obj, str } from '../json.ts';
import { parseOpenAIUsage } from '../openai/usage.ts';
import type { Endpoint, ParsedResponse, RelayInput, SyncProviderAdaptor, UpstreamError } from '../types.ts';
import { buildDifyBody, DIFY_DEFAULT_BASE } from './request.ts';
import { difyStreamConversion } from './stream.ts';

export const DIFY_CHANNEL_TYPE = 37;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat']);

function parseJson(text: string): Obj {
  try {
    const v = JSON.parse(text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** OpenAI usage object of a Dify `metadata.usage` (prompt/completion/total tokens plus prices, ignored). */
export function difyUsage(res: Obj) {
  const metadata = isObject(res.metadata) ? res.metadata : {};
  return parseOpenAIUsage(metadata.usage);
}

function parseAnswer(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const res = parseJson(new TextDecoder().decode(body));
  const u = difyUsage(res);
  const conversationId = str(res.conversation_id);
  const created = typeof res.created_at === 'number' ? res.created_at : Math.floor(now() / 1000);
  const answer = str(res.answer);
  const out: Obj = {
    id: conversationId || `chatcmpl-dify-${str(res.message_id) || created}`,
    object: 'chat.completion',
    created,
    model: input.upstreamModel,
    conversation_id: conversationId,
    choices: [
      { index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop', logprobs: null },
    ],
  };
  if (u)
    out.usage = {
      prompt_tokens: u.promptTokens,
      completion_tokens: u.completionTokens,
      total_tokens: u.promptTokens + u.completionTokens,
    };
  return { body: JSON.stringify(out), contentType: 'application/json', usage: u, completionText: answer };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
};

export function parseDifyError(res: { status: number; bodyText: string }): UpstreamError {
  const json = parseJson(res.bodyText);
  const message =
    str(json.message) ||
    res.bodyText
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 300) ||
    `upstream returned status ${res.status}`;
  return {
    status: res.status,
    message,
    type: ERROR_TYPES[res.status] ?? 'upstream_error',
    code: str(json.code) || null,
  };
}

export function createDifyAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'dify',
    channelTypes: [DIFY_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input) {
      const headers = new Headers({
        'content-type': 'application/json',
        authorization: `Bearer ${channel.key}`,
      });
      if (input.stream) headers.set('accept', 'text/event-stream');
      return {
        url: `${channel.baseUrl || DIFY_DEFAULT_BASE}/v1/chat-messages`,
        method: 'POST',
        headers,
        body: JSON.stringify({ ...buildDifyBody(input), ...channel.paramOverride }),
      };
    },
    parseResponse: (input, res) => parseAnswer(input, res.body, now),
    streamConversion: (input) => difyStreamConversion(input, now),
    parseError: parseDifyError,
  };
}

export const difyAdaptor: SyncProviderAdaptor = createDifyAdaptor();
