/**
 * OpenAI Responses (inbound, `POST /v1/responses`) ⇄ OpenAI chat. Lets a Responses client (the `openai` SDK's
 * `responses.create` / `responses.stream`, Codex, @openai/agents) reach any channel that serves chat but has no
 * Responses API of its own (Claude, Gemini, DeepSeek and the other OpenAI-compatible upstreams): the request
 * becomes a chat request, the chat answer — whole or streamed — a Response object or the Responses event
 * sequence (https://platform.openai.com/docs/api-reference/responses-streaming).
 *
 * Nothing is stored: `previous_response_id` and `item_reference` inputs cannot be resolved and are refused
 * (`refusal`); the answer says `store: false`. Reasoning items the client sends back are dropped (a chat
 * upstream cannot take them), hosted tools (web_search, file_search, ...) are dropped, function tools pass.
 * `reasoning_content` from the upstream comes back as a reasoning item with a summary text.
 */

import type { FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { parseOpenAIUsage } from '../openai/usage.ts';
import { SseDecoder } from '../sse.ts';

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const randomId = () => crypto.randomUUID().replaceAll('-', '');

/** Why this Responses request cannot go through a chat upstream, or null. */
export function responsesRefusal(body: Obj): { message: string; param: string } | null {
  if (str(body.previous_response_id))
    return {
      message:
        'previous_response_id is not supported on this channel: it has no Responses API and the gateway stores ' +
        'no responses; send the whole conversation in input instead',
      param: 'previous_response_id',
    };
  if (isObject(body.conversation) || str(body.conversation))
    return {
      message: 'conversation is not supported on this channel: send the whole conversation in input instead',
      param: 'conversation',
    };
  for (const item of arr(body.input))
    if (isObject(item) && item.type === 'item_reference')
      return {
        message: 'item_reference inputs are not supported on this channel: send the items themselves',
        param: 'input',
      };
  return null;
}

/** A Responses content part → a chat content part (null: nothing a chat upstream can take). */
function chatPart(part: Obj): Obj | null {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
      return { type: 'text', text: str(part.text) };
    case 'refusal':
      return { type: 'text', text: str(part.refusal) };
    case 'input_image': {
      const url = isObject(part.image_url) ? str(part.image_url.url) : str(part.image_url);
      if (!url) return null;
      return {
        type: 'image_url',
        image_url: { url, ...(str(part.detail) && part.detail !== 'auto' ? { detail: part.detail } : {}) },
      };
    }
    case 'input_file':
      if (!str(part.file_data)) return null;
      return {
        type: 'file',
        file: { file_data: part.file_data, ...(str(part.filename) ? { filename: part.filename } : {}) },
      };
    case 'input_audio':
      return isObject(part.input_audio) ? { type: 'input_audio', input_audio: part.input_audio } : null;
    default:
      return null;
  }
}

/** Message content as chat content: a string stays one, parts become chat parts (a lone text part a string). */
function chatContent(content: unknown): string | Obj[] {
  if (typeof content === 'string') return content;
  const parts = arr(content)
    .filter(isObject)
    .map(chatPart)
    .filter((p): p is Obj => p !== null);
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => str(p.text)).join('');
  return parts;
}

const CHAT_ROLES = new Set(['user', 'assistant', 'system']);

/** Responses `input` → chat messages. Consecutive function calls join the assistant turn before them. */
function inputMessages(input: unknown): Obj[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: Obj[] = [];
  for (const item of arr(input)) {
    if (!isObject(item)) continue;
    const type = str(item.type) || 'message';
    if (type === 'message') {
      const role = item.role === 'developer' ? 'system' : str(item.role);
      if (!CHAT_ROLES.has(role)) continue;
      messages.push({ role, content: chatContent(item.content) });
    } else if (type === 'function_call') {
      const call = {
        id: str(item.call_id) || str(item.id),
        type: 'function',
        function: { name: str(item.name), arguments: str(item.arguments) || '{}' },
      };
      const last = messages.at(-1);
      // The assistant turn that said something before calling, or the calls before this one.
      if (last?.role === 'assistant') last.tool_calls = [...arr(last.tool_calls), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      // The output is a string or a list of content parts; tool messages carry text.
      const output = item.output;
      const content =
        typeof output === 'string'
          ? output
          : Array.isArray(output)
            ? output
                .map((p) => (isObject(p) ? str(p.text) : ''))
                .filter(Boolean)
                .join('\n')
            : JSON.stringify(output ?? '');
      messages.push({ role: 'tool', tool_call_id: str(item.call_id), content });
    }
    // reasoning items (summaries, encrypted content) cannot be handed to a chat upstream: dropped.
  }
  return messages;
}

function chatTools(tools: unknown): Obj[] {
  const out: Obj[] = [];
  for (const t of arr(tools)) {
    if (!isObject(t) || t.type !== 'function' || !str(t.name)) continue;
    out.push({
      type: 'function',
      function: {
        name: t.name,
        ...(str(t.description) ? { description: t.description } : {}),
        parameters: isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} },
        ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}),
      },
    });
  }
  return out;
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (!isObject(choice)) return undefined;
  if (choice.type === 'function' && str(choice.name))
    return { type: 'function', function: { name: choice.name } };
  // allowed_tools: the subset cannot be expressed in every chat upstream; its mode can.
  if (choice.type === 'allowed_tools') return choice.mode === 'required' ? 'required' : 'auto';
  return undefined;
}

function responseFormat(text: unknown): Obj | undefined {
  const format = isObject(text) && isObject(text.format) ? text.format : null;
  if (!format) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema')
    return {
      type: 'json_schema',
      json_schema: {
        name: str(format.name) || 'response',
        ...(str(format.description) ? { description: format.description } : {}),
        schema: isObject(format.schema) ? format.schema : {},
        ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
      },
    };
  return undefined;
}

/** A Responses request body → an OpenAI chat request body (stream usage always requested). */
export function responsesToChat(body: Obj, stream: boolean): Obj {
  const messages: Obj[] = [];
  if (str(body.instructions)) messages.push({ role: 'system', content: body.instructions });
  messages.push(...inputMessages(body.input));
  const out: Obj = { model: body.model, messages };
  if (typeof body.max_output_tokens === 'number') out.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (str(body.user)) out.user = body.user;
  const effort = isObject(body.reasoning) ? str(body.reasoning.effort) : '';
  if (effort) out.reasoning_effort = effort;
  const format = responseFormat(body.text);
  if (format) out.response_format = format;
  const tools = chatTools(body.tools);
  if (tools.length) {
    out.tools = tools;
    const choice = chatToolChoice(body.tool_choice);
    if (choice !== undefined) out.tool_choice = choice;
    if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

/** Chat usage (any OpenAI-family shape) → the Responses usage object. */
function responsesUsage(raw: unknown): Obj | null {
  const u = parseOpenAIUsage(raw);
  if (!u) return null;
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

const EMPTY_USAGE: Obj = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

/** The request fields a Response object echoes (what the official API returns beside the output). */
function echo(request: Obj): Obj {
  const tools = arr(request.tools).filter((t) => isObject(t) && t.type === 'function');
  const format = isObject(request.text) && isObject(request.text.format) ? request.text.format : null;
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  return {
    instructions: str(request.instructions) || null,
    max_output_tokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : null,
    metadata: isObject(request.metadata) ? request.metadata : {},
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    reasoning: { effort: str(reasoning.effort) || null, summary: str(reasoning.summary) || null },
    store: false,
    temperature: typeof request.temperature === 'number' ? request.temperature : 1,
    text: { format: format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools,
    top_p: typeof request.top_p === 'number' ? request.top_p : 1,
    truncation: 'disabled',
    user: str(request.user) || null,
  };
}

/** Status and incomplete_details from the chat finish reason. */
function outcome(finishReason: string): { status: string; incomplete_details: Obj | null } {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const responseId = (chatId: string) =>
  `resp_${chatId.replace(/^chatcmpl-/, '').replace(/[^\w-]/g, '') || randomId()}`;

function nowSeconds(chat: Obj): number {
  return typeof chat.created === 'number' ? chat.created : Math.floor(Date.now() / 1000);
}

const textPart = (text: string): Obj => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** An OpenAI chat completion (JSON text) → a Response object (JSON text). */
export function chatToResponses(chatJson: string, model: string, request: Obj = {}): string {
  let json: unknown;
  try {
    json = JSON.parse(chatJson);
  } catch {
    json = {};
  }
  const chat = isObject(json) ? json : {};
  const choice = Array.isArray(chat.choices) && isObject(chat.choices[0]) ? chat.choices[0] : {};
  const msg = isObject(choice.message) ? choice.message : {};
  const id = responseId(str(chat.id));
  const base = id.slice('resp_'.length);
  const output: Obj[] = [];
  const reasoning = str(msg.reasoning_content) || str(msg.reasoning);
  if (reasoning)
    output.push({
      type: 'reasoning',
      id: `rs_${base}`,
      summary: [{ type: 'summary_text', text: reasoning }],
    });
  const content: Obj[] = [];
  if (str(msg.content)) content.push(textPart(str(msg.content)));
  if (str(msg.refusal)) content.push({ type: 'refusal', refusal: msg.refusal });
  if (content.length)
    output.push({ type: 'message', id: `msg_${base}`, status: 'completed', role: 'assistant', content });
  arr(msg.tool_calls).forEach((call, i) => {
    if (!isObject(call) || !isObject(call.function)) return;
    output.push({
      type: 'function_call',
      id: `fc_${base}_${i}`,
      call_id: str(call.id) || `call_${base}_${i}`,
      name: str(call.function.name),
      arguments: str(call.function.arguments) || '{}',
      status: 'completed',
    });
  });
  const created = nowSeconds(chat);
  return JSON.stringify({
    id,
    object: 'response',
    created_at: created,
    ...outcome(str(choice.finish_reason)),
    completed_at: created,
    error: null,
    model,
    output,
    ...echo(request),
    usage: responsesUsage(chat.usage) ?? EMPTY_USAGE,
  });
}

type OpenItem =
  | { kind: 'reasoning'; index: number; id: string; text: string }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'call'; index: number; id: string; callId: string; name: string; args: string };

/**
 * OpenAI chat chunks (SSE bytes) → the Responses event stream (SSE bytes, `event:` + `data:` with a
 * `sequence_number`): response.created, response.in_progress, then per output item output_item.added, its
 * content events and output_item.done, and response.completed (or response.incomplete) with the whole Response
 * and its usage. No `[DONE]` follows, as with OpenAI.
 */
export function chatStreamToResponses(model: string, request: Obj = {}): FrameTransformer {
  const decoder = new SseDecoder();
  const encoder = new TextEncoder();
  let seq = 0;
  let started = false;
  let ended = false;
  let id = '';
  let created = 0;
  let usage: Obj | null = null;
  let finishReason = '';
  /** Items in output order; `done` holds the final form of each finished one. */
  const done: (Obj | null)[] = [];
  /** The reasoning or message item being written (one at a time). */
  let current: OpenItem | null = null;
  /** Function calls by chat tool-call index: they stay open until the end (fragments may interleave). */
  const calls = new Map<number, Extract<OpenItem, { kind: 'call' }>>();

  const emit = (out: Uint8Array[], type: string, data: Obj) =>
    out.push(
      encoder.encode(
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`,
      ),
    );
  const base = () => id.slice('resp_'.length);
  const response = (status: string, extra: Obj): Obj => ({
    id,
    object: 'response',
    created_at: created,
    status,
    error: null,
    incomplete_details: null,
    model,
    output: [],
    ...echo(request),
    usage: null,
    ...extra,
  });

  function start(out: Uint8Array[], chatId: string): void {
    if (started) return;
    started = true;
    id = responseId(chatId);
    created = Math.floor(Date.now() / 1000);
    emit(out, 'response.created', { response: response('in_progress', {}) });
    emit(out, 'response.in_progress', { response: response('in_progress', {}) });
  }

  function closeCurrent(out: Uint8Array[]): void {
    const item = current;
    if (!item) return;
    current = null;
    if (item.kind === 'reasoning') {
      const part = { type: 'summary_text', text: item.text };
      const common = { item_id: item.id, output_index: item.index, summary_index: 0 };
      emit(out, 'response.reasoning_summary_text.done', { ...common, text: item.text });
      emit(out, 'response.reasoning_summary_part.done', { ...common, part });
      const final = { type: 'reasoning', id: item.id, summary: [part] };
      done[item.index] = final;
      emit(out, 'response.output_item.done', { output_index: item.index, item: final });
    } else if (item.kind === 'message') {
      const part = textPart(item.text);
      const common = { item_id: item.id, output_index: item.index, content_index: 0 };
      emit(out, 'response.output_text.done', { ...common, text: item.text, logprobs: [] });
      emit(out, 'response.content_part.done', { ...common, part });
      const final = {
        type: 'message',
        id: item.id,
        status: 'completed',
        role: 'assistant',
        content: [part],
      };
      done[item.index] = final;
      emit(out, 'response.output_item.done', { output_index: item.index, item: final });
    }
  }

  function closeCall(out: Uint8Array[], call: Extract<OpenItem, { kind: 'call' }>): void {
    const args = call.args || '{}';
    emit(out, 'response.function_call_arguments.done', {
      item_id: call.id,
      output_index: call.index,
      name: call.name,
      arguments: args,
    });
    const final = {
      type: 'function_call',
      id: call.id,
      call_id: call.callId,
      name: call.name,
      arguments: args,
      status: 'completed',
    };
    done[call.index] = final;
    emit(out, 'response.output_item.done', { output_index: call.index, item: final });
  }

  function onReasoning(out: Uint8Array[], delta: string): void {
    if (current?.kind !== 'reasoning') {
      closeCurrent(out);
      const index = done.length;
      done.push(null);
      current = { kind: 'reasoning', index, id: `rs_${base()}_${index}`, text: '' };
      emit(out, 'response.output_item.added', {
        output_index: index,
        item: { type: 'reasoning', id: current.id, summary: [] },
      });
      emit(out, 'response.reasoning_summary_part.added', {
        item_id: current.id,
        output_index: index,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    current.text += delta;
    emit(out, 'response.reasoning_summary_text.delta', {
      item_id: current.id,
      output_index: current.index,
      summary_index: 0,
      delta,
    });
  }

  function onText(out: Uint8Array[], delta: string): void {
    if (current?.kind !== 'message') {
      closeCurrent(out);
      const index = done.length;
      done.push(null);
      current = { kind: 'message', index, id: `msg_${base()}_${index}`, text: '' };
      emit(out, 'response.output_item.added', {
        output_index: index,
        item: { type: 'message', id: current.id, status: 'in_progress', role: 'assistant', content: [] },
      });
      emit(out, 'response.content_part.added', {
        item_id: current.id,
        output_index: index,
        content_index: 0,
        part: textPart(''),
      });
    }
    current.text += delta;
    emit(out, 'response.output_text.delta', {
      item_id: current.id,
      output_index: current.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  function onToolCall(out: Uint8Array[], call: Obj): void {
    const fn = isObject(call.function) ? call.function : {};
    const at = typeof call.index === 'number' ? call.index : 0;
    let open = calls.get(at);
    if (!open) {
      closeCurrent(out);
      const index = done.length;
      done.push(null);
      open = {
        kind: 'call',
        index,
        id: `fc_${base()}_${index}`,
        callId: str(call.id) || `call_${base()}_${index}`,
        name: str(fn.name),
        args: '',
      };
      calls.set(at, open);
      emit(out, 'response.output_item.added', {
        output_index: index,
        item: {
          type: 'function_call',
          id: open.id,
          call_id: open.callId,
          name: open.name,
          arguments: '',
          status: 'in_progress',
        },
      });
    }
    const args = str(fn.arguments);
    if (args) {
      open.args += args;
      emit(out, 'response.function_call_arguments.delta', {
        item_id: open.id,
        output_index: open.index,
        delta: args,
      });
    }
  }

  function finish(out: Uint8Array[]): void {
    if (ended) return;
    ended = true;
    start(out, '');
    closeCurrent(out);
    for (const call of calls.values()) closeCall(out, call);
    const { status, incomplete_details } = outcome(finishReason);
    const final = response(status, {
      incomplete_details,
      completed_at: Math.floor(Date.now() / 1000),
      output: done.filter((i): i is Obj => i !== null),
      usage: usage ?? EMPTY_USAGE,
    });
    emit(out, status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final });
  }

  function onChunk(chunk: Obj, out: Uint8Array[]): void {
    const u = responsesUsage(chunk.usage);
    if (u) usage = u;
    if (isObject(chunk.error)) {
      start(out, str(chunk.id));
      ended = true;
      emit(out, 'error', {
        code: str(chunk.error.code) || str(chunk.error.type) || 'upstream_error',
        message: str(chunk.error.message) || 'upstream stream error',
        param: null,
      });
      return;
    }
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : null;
    start(out, str(chunk.id));
    if (!choice) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = str(delta.reasoning_content) || str(delta.reasoning);
    if (reasoning) onReasoning(out, reasoning);
    if (str(delta.content)) onText(out, str(delta.content));
    for (const call of arr(delta.tool_calls)) if (isObject(call)) onToolCall(out, call);
    if (str(choice.finish_reason)) finishReason = str(choice.finish_reason);
  }

  const handle = (events: ReturnType<SseDecoder['push']>, out: Uint8Array[]) => {
    for (const ev of events) {
      if (ended) return;
      const data = ev.data.trim();
      if (data === '[DONE]') {
        finish(out);
        continue;
      }
      try {
        const chunk = JSON.parse(data);
        if (isObject(chunk)) onChunk(chunk, out);
      } catch {
        // Not JSON: nothing a Responses client could read.
      }
    }
  };

  return {
    transform(bytes, controller) {
      const out: Uint8Array[] = [];
      handle(decoder.push(bytes), out);
      for (const b of out) controller.enqueue(b);
    },
    flush(controller) {
      const out: Uint8Array[] = [];
      handle(decoder.end(), out);
      finish(out);
      for (const b of out) controller.enqueue(b);
    },
  };
}
