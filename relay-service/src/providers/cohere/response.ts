/**
 * Cohere v2 replies → OpenAI shapes: chat (`message.content` text and thinking blocks, `tool_calls`, `tool_plan`,
 * `finish_reason`, `usage`), embed (`embeddings.float` → `data[].embedding`, float or base64 as the client asked)
 * and rerank (`results[{index, relevance_score}]` → the Jina/Cohere-style answer new-api returns, with `document`
 * and `usage`). Errors are `{message}` or `{id, message}` with the HTTP status.
 */

import { base64Floats } from '../gemini/embeddings.ts';
import { isObject, type Obj, str } from '../json.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';
import { documentText } from './request.ts';
import { cohereUsage, openAIUsage } from './usage.ts';

/** Cohere finish_reason → OpenAI finish_reason. */
export function finishReason(reason: unknown): string | null {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop';
    case 'MAX_TOKENS':
    case 'TIMEOUT':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    default:
      return reason == null ? null : 'stop';
  }
}

export const chatCompletionId = (id: string): string => `chatcmpl-${id || 'cohere'}`;

function parseJson(body: Uint8Array): Obj {
  try {
    const v: unknown = JSON.parse(new TextDecoder().decode(body));
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

export function parseChatResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const json = parseJson(body);
  const msg = isObject(json.message) ? json.message : {};
  const texts: string[] = [];
  const thinking: string[] = [];
  for (const block of Array.isArray(msg.content) ? msg.content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text') texts.push(str(block.text));
    else if (block.type === 'thinking') thinking.push(str(block.thinking));
  }
  const calls = (Array.isArray(msg.tool_calls) ? msg.tool_calls : []).filter(isObject).map((c) => ({
    id: str(c.id),
    type: 'function',
    function: {
      name: isObject(c.function) ? str(c.function.name) : '',
      arguments: isObject(c.function) ? str(c.function.arguments) : '',
    },
  }));
  // The tool plan is the visible text Cohere writes before its tool calls.
  const text = texts.join('') || str(msg.tool_plan);
  const message: Obj = { role: 'assistant', content: text || null };
  if (thinking.length) message.reasoning_content = thinking.join('');
  if (calls.length) message.tool_calls = calls;
  const u = cohereUsage(json.usage);
  const out: Obj = {
    id: chatCompletionId(str(json.id)),
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: input.upstreamModel,
    choices: [{ index: 0, message, finish_reason: finishReason(json.finish_reason), logprobs: null }],
  };
  if (u) out.usage = openAIUsage(u);
  const completionText = thinking.join('') + text + calls.map((c) => c.function.arguments).join('');
  return { body: JSON.stringify(out), contentType: 'application/json', usage: u, completionText };
}

export function parseEmbedResponse(input: RelayInput, body: Uint8Array): ParsedResponse {
  const json = parseJson(body);
  const embeddings = isObject(json.embeddings) ? json.embeddings : {};
  const list = Array.isArray(embeddings.float) ? embeddings.float : [];
  const base64 = (input.body as Obj).encoding_format === 'base64';
  const data = list.map((values, index) => {
    const v = Array.isArray(values) ? (values as number[]) : [];
    return { object: 'embedding', index, embedding: base64 ? base64Floats(v) : v };
  });
  const u = cohereUsage(json.meta);
  return {
    body: JSON.stringify({
      object: 'list',
      data,
      model: input.upstreamModel,
      usage: u ? { prompt_tokens: u.promptTokens, total_tokens: u.promptTokens } : undefined,
    }),
    contentType: 'application/json',
    usage: u,
    completionText: '',
  };
}

/**
 * Rerank answer in new-api's shape: `results[{index, relevance_score, document}]` and `usage`. Cohere v2 no longer
 * returns documents, so `document` ({text} for a string, the client's object otherwise) is filled from the
 * request unless the client sent `return_documents: false`. Cohere bills rerank in search units and reports no
 * tokens: usage is then null and core counts the query and documents locally (as new-api does).
 */
export function parseRerankResponse(input: RelayInput, body: Uint8Array): ParsedResponse {
  const json = parseJson(body);
  const req = input.body as Obj;
  const docs = Array.isArray(req.documents) ? req.documents : [];
  const withDocs = req.return_documents !== false;
  const results = (Array.isArray(json.results) ? json.results : []).filter(isObject).map((r) => {
    const index = typeof r.index === 'number' ? r.index : 0;
    const doc = docs[index];
    return {
      index,
      relevance_score: typeof r.relevance_score === 'number' ? r.relevance_score : 0,
      ...(withDocs && doc !== undefined
        ? { document: isObject(doc) ? doc : { text: documentText(doc) } }
        : {}),
    };
  });
  const meta = isObject(json.meta) ? json.meta : {};
  const billed = isObject(meta.billed_units) ? meta.billed_units : {};
  const u = cohereUsage(meta);
  const usage: Obj = u
    ? { prompt_tokens: u.promptTokens, completion_tokens: 0, total_tokens: u.promptTokens }
    : {};
  if (typeof billed.search_units === 'number') usage.search_units = billed.search_units;
  return {
    body: JSON.stringify({ id: str(json.id) || undefined, results, usage }),
    contentType: 'application/json',
    usage: u,
    completionText: '',
  };
}

/** GET /v1/models → names (`models[].name`). */
export function parseModels(body: unknown): string[] {
  const list = isObject(body) && Array.isArray(body.models) ? body.models : [];
  return [...new Set(list.map((m) => (isObject(m) ? str(m.name) : '')).filter(Boolean))];
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * `{message}` or `{id, message}`; anything else is read as text. Cohere's non-standard 498 (invalid token) is a
 * 401, so core treats it as the credential failure it is (auto-disable, the client's wording).
 */
export function parseCohereError(raw: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  const res = raw.status === 498 ? { ...raw, status: 401 } : raw;
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  const type = ERROR_TYPES[res.status] ?? 'upstream_error';
  const message = isObject(json) ? str(json.message) : '';
  if (message) return { status: res.status, message, type, code: null };
  const plain = res.bodyText
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
  return { status: res.status, message: plain || `upstream returned status ${res.status}`, type, code: null };
}
