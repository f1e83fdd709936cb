/**
 * OpenAI requests → Cohere API v2 requests (https://docs.cohere.com/reference/chat, /reference/embed,
 * /reference/rerank). Chat: system/developer, user (text and image_url parts), assistant (text, tool_calls, the
 * text beside tool calls as `tool_plan`) and tool messages map to v2 messages; sampling parameters are renamed
 * (top_p → p, stop → stop_sequences) and clamped to Cohere's documented ranges; response_format json_object /
 * json_schema becomes `{type:'json_object', json_schema}`. param_override is applied last, the model after it.
 */
import { embeddingInputs } from '../gemini/embeddings.ts';
import { isObject, type Obj, str } from '../json.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

export const COHERE_DEFAULT_BASE = 'https://api.cohere.com';

/** The channel's base URL without a trailing slash or a trailing API version (`/v1`, `/v2`). */
export function cohereBase(channel: ChannelConfig): string {
  return (channel.baseUrl || COHERE_DEFAULT_BASE).replace(/\/+$/, '').replace(/\/v[12]$/, '');
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Text of OpenAI message content (a string or content parts); images are dropped. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => isObject(p) && p.type === 'text')
    .map((p) => str((p as Obj).text))
    .join('\n');
}

/** User content: a string stays a string; parts become Cohere text / image_url blocks. */
function userContent(content: unknown): string | Obj[] {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  const out: Obj[] = [];
  for (const p of content) {
    if (!isObject(p)) continue;
    if (p.type === 'text') out.push({ type: 'text', text: str(p.text) });
    else if (p.type === 'image_url') {
      const img = isObject(p.image_url) ? p.image_url : { url: str(p.image_url) };
      const url = str(img.url);
      if (url)
        out.push({
          type: 'image_url',
          image_url: { url, ...(str(img.detail) ? { detail: img.detail } : {}) },
        });
    }
  }
  return out;
}

function toolCalls(calls: unknown): Obj[] {
  const out: Obj[] = [];
  for (const c of Array.isArray(calls) ? calls : []) {
    if (!isObject(c) || !isObject(c.function)) continue;
    const args = c.function.arguments;
    out.push({
      id: str(c.id),
      type: 'function',
      function: {
        name: str(c.function.name),
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      },
    });
  }
  return out;
}

export function toCohereMessages(messages: unknown): Obj[] {
  const out: Obj[] = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isObject(m)) continue;
    switch (m.role) {
      case 'system':
      case 'developer':
        out.push({ role: 'system', content: textOf(m.content) });
        break;
      case 'assistant': {
        const calls = toolCalls(m.tool_calls);
        const text = textOf(m.content);
        if (calls.length > 0) {
          // Cohere keeps the text that comes with tool calls as the tool plan.
          out.push({ role: 'assistant', ...(text ? { tool_plan: text } : {}), tool_calls: calls });
        } else out.push({ role: 'assistant', content: text });
        break;
      }
      case 'tool':
        out.push({
          role: 'tool',
          tool_call_id: str(m.tool_call_id),
          content: [{ type: 'text', text: textOf(m.content) }],
        });
        break;
      default:
        out.push({ role: 'user', content: userContent(m.content) });
    }
  }
  return out;
}

function toCohereTools(tools: unknown, choice: unknown): Obj[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  // Cohere cannot force one named tool: offer only that tool and require a call.
  const only = isObject(choice) && isObject(choice.function) ? str(choice.function.name) : '';
  const out: Obj[] = [];
  for (const t of tools) {
    if (!isObject(t) || !isObject(t.function)) continue;
    const fn = t.function;
    if (only && fn.name !== only) continue;
    out.push({
      type: 'function',
      function: {
        name: str(fn.name),
        ...(str(fn.description) ? { description: fn.description } : {}),
        parameters: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
      },
    });
  }
  return out.length ? out : undefined;
}

function toolChoice(choice: unknown): string | undefined {
  if (choice === 'required' || isObject(choice)) return 'REQUIRED';
  if (choice === 'none') return 'NONE';
  return undefined;
}

function responseFormat(format: unknown): Obj | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const spec = isObject(format.json_schema) ? format.json_schema : {};
    return { type: 'json_object', ...(isObject(spec.schema) ? { json_schema: spec.schema } : {}) };
  }
  return undefined;
}

const withOverride = (channel: ChannelConfig, body: Obj, model: string): string =>
  JSON.stringify({ ...body, ...channel.paramOverride, model });

export function buildChatBody(channel: ChannelConfig, input: RelayInput): string {
  const b = input.body as Obj;
  const out: Obj = { model: input.upstreamModel, messages: toCohereMessages(b.messages) };
  if (input.stream) out.stream = true;
  const tools = toCohereTools(b.tools, b.tool_choice);
  if (tools) {
    out.tools = tools;
    const choice = toolChoice(b.tool_choice);
    if (choice) out.tool_choice = choice;
  }
  const maxTokens = [b.max_completion_tokens, b.max_tokens].find((v) => typeof v === 'number' && v > 0);
  if (typeof maxTokens === 'number') out.max_tokens = Math.floor(maxTokens);
  // Cohere's documented ranges: temperature 0–1, p 0.01–0.99, penalties 0–1.
  if (typeof b.temperature === 'number') out.temperature = clamp(b.temperature, 0, 1);
  if (typeof b.top_p === 'number') out.p = clamp(b.top_p, 0.01, 0.99);
  if (typeof b.top_k === 'number') out.k = clamp(Math.floor(b.top_k), 0, 500);
  if (typeof b.frequency_penalty === 'number') out.frequency_penalty = clamp(b.frequency_penalty, 0, 1);
  if (typeof b.presence_penalty === 'number') out.presence_penalty = clamp(b.presence_penalty, 0, 1);
  if (typeof b.seed === 'number' && b.seed >= 0) out.seed = Math.floor(b.seed);
  const stop = typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) ? b.stop : [];
  const sequences = stop.filter((s): s is string => typeof s === 'string' && s !== '');
  if (sequences.length) out.stop_sequences = sequences.slice(0, 5);
  const format = responseFormat(b.response_format);
  if (format) out.response_format = format;
  if (b.logprobs === true) out.logprobs = true;
  return withOverride(channel, out, input.upstreamModel);
}

/**
 * `input_type` is required by Embed v3+; a client may choose it (Cohere's own field passes through), the default
 * is `search_document` (texts stored for retrieval). `dimensions` maps to `output_dimension` (Embed v4).
 */
export function buildEmbedBody(channel: ChannelConfig, input: RelayInput): string {
  const b = input.body as Obj;
  const out: Obj = {
    model: input.upstreamModel,
    texts: embeddingInputs(b),
    input_type: str(b.input_type) || 'search_document',
    embedding_types: ['float'],
  };
  if (typeof b.dimensions === 'number') out.output_dimension = Math.floor(b.dimensions);
  if (typeof b.truncate === 'string') out.truncate = b.truncate;
  return withOverride(channel, out, input.upstreamModel);
}

/** The text Cohere ranks for a rerank document: a string, or the `text` of a Jina-style `{text}` object. */
export function documentText(d: unknown): string {
  if (typeof d === 'string') return d;
  if (isObject(d)) return typeof d.text === 'string' ? d.text : JSON.stringify(d);
  return String(d ?? '');
}

export function buildRerankBody(channel: ChannelConfig, input: RelayInput): string {
  const b = input.body as Obj;
  const documents = (Array.isArray(b.documents) ? b.documents : []).map(documentText);
  const out: Obj = {
    model: input.upstreamModel,
    query: isObject(b.query) ? documentText(b.query) : str(b.query),
    documents,
  };
  if (typeof b.top_n === 'number' && b.top_n > 0) out.top_n = Math.floor(b.top_n);
  if (typeof b.max_tokens_per_doc === 'number') out.max_tokens_per_doc = Math.floor(b.max_tokens_per_doc);
  return withOverride(channel, out, input.upstreamModel);
}
