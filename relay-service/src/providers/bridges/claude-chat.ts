/**
 * Claude Messages (inbound) ⇄ OpenAI chat (what OpenAI-family channels speak). Lets a Claude client (Claude
 * Code, the Anthropic SDK) reach any channel that serves chat: the request is turned into a chat request, the
 * chat answer — whole or streamed — back into a Claude message or Claude's event sequence. Thinking blocks the
 * client sends are dropped (an OpenAI upstream cannot verify their signatures); `reasoning_content` from the
 * upstream is not returned as thinking for the same reason.
 */

import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, num, type Obj, str } from '../json.ts';
import { SseDecoder } from '../sse.ts';

function textOfBlocks(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (isObject(b) && b.type === 'text' ? str(b.text) : ''))
    .filter(Boolean)
    .join('\n');
}

function imagePart(block: Obj): Obj | null {
  const src = isObject(block.source) ? block.source : {};
  if (src.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${str(src.media_type)};base64,${str(src.data)}` } };
  if (src.type === 'url') return { type: 'image_url', image_url: { url: str(src.url) } };
  return null;
}

/** A Claude Messages request body → an OpenAI chat request body (stream usage always requested). */
export function claudeToChat(body: Obj): Obj {
  const messages: Obj[] = [];
  const system = textOfBlocks(body.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m)) continue;
    const blocks =
      typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }]
        : Array.isArray(m.content)
          ? m.content
          : [];
    if (m.role === 'assistant') {
      const text: string[] = [];
      const calls: Obj[] = [];
      for (const b of blocks) {
        if (!isObject(b)) continue;
        if (b.type === 'text') text.push(str(b.text));
        else if (b.type === 'tool_use')
          calls.push({
            id: str(b.id),
            type: 'function',
            function: { name: str(b.name), arguments: JSON.stringify(b.input ?? {}) },
          });
      }
      const msg: Obj = { role: 'assistant', content: text.length ? text.join('') : null };
      if (calls.length) msg.tool_calls = calls;
      messages.push(msg);
      continue;
    }
    // A user turn: tool results become tool messages (in order, before the user's own content).
    const parts: Obj[] = [];
    for (const b of blocks) {
      if (!isObject(b)) continue;
      if (b.type === 'tool_result') {
        const content = typeof b.content === 'string' ? b.content : textOfBlocks(b.content);
        messages.push({
          role: 'tool',
          tool_call_id: str(b.tool_use_id),
          content: b.is_error ? `Error: ${content}` : content,
        });
      } else if (b.type === 'text') parts.push({ type: 'text', text: str(b.text) });
      else if (b.type === 'image') {
        const p = imagePart(b);
        if (p) parts.push(p);
      }
    }
    if (parts.length === 1 && parts[0]?.type === 'text')
      messages.push({ role: 'user', content: parts[0].text });
    else if (parts.length) messages.push({ role: 'user', content: parts });
  }
  const out: Obj = { model: body.model, messages };
  if (typeof body.max_tokens === 'number') out.max_tokens = body.max_tokens;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) out.stop = body.stop_sequences;
  if (Array.isArray(body.tools)) {
    const tools = body.tools
      .filter(
        (t): t is Obj =>
          isObject(t) && typeof t.name === 'string' && (t.type === undefined || t.type === 'custom'),
      )
      .map((t) => ({
        type: 'function',
        function: {
          name: t.name,
          ...(str(t.description) ? { description: t.description } : {}),
          parameters: isObject(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
        },
      }));
    if (tools.length) out.tools = tools;
  }
  const choice = isObject(body.tool_choice) ? body.tool_choice : null;
  if (choice && out.tools) {
    if (choice.type === 'any') out.tool_choice = 'required';
    else if (choice.type === 'none') out.tool_choice = 'none';
    else if (choice.type === 'tool')
      out.tool_choice = { type: 'function', function: { name: str(choice.name) } };
    else out.tool_choice = 'auto';
  }
  // Structured output (output_config.format, what messages.parse / zodOutputFormat send) is chat's json_schema
  // response_format; the schema travels whole. Not `strict`: OpenAI's strict mode refuses schemas with optional
  // properties, which Claude's structured output accepts.
  const outputConfig = isObject(body.output_config) ? body.output_config : {};
  const format = isObject(outputConfig.format) ? outputConfig.format : null;
  if (format?.type === 'json_schema' && isObject(format.schema))
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

const STOP: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

function claudeUsageOf(u: unknown): Obj {
  const o = isObject(u) ? u : {};
  const cached = isObject(o.prompt_tokens_details) ? num(o.prompt_tokens_details.cached_tokens) : 0;
  return {
    input_tokens: Math.max(0, num(o.prompt_tokens) - cached),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
    output_tokens: num(o.completion_tokens),
  };
}

const messageId = (chatId: string) =>
  `msg_${chatId.replace(/^chatcmpl-/, '') || crypto.randomUUID().replaceAll('-', '')}`;

/** An OpenAI chat completion (JSON text) → a Claude message (JSON text). */
export function chatToClaude(chatJson: string, model: string): string {
  let json: unknown;
  try {
    json = JSON.parse(chatJson);
  } catch {
    json = {};
  }
  const chat = isObject(json) ? json : {};
  const choice = Array.isArray(chat.choices) && isObject(chat.choices[0]) ? chat.choices[0] : {};
  const msg = isObject(choice.message) ? choice.message : {};
  const content: Obj[] = [];
  if (str(msg.content)) content.push({ type: 'text', text: msg.content });
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    let input: unknown = {};
    try {
      input = JSON.parse(str(call.function.arguments) || '{}');
    } catch {
      input = { raw: call.function.arguments };
    }
    content.push({ type: 'tool_use', id: str(call.id), name: str(call.function.name), input });
  }
  return JSON.stringify({
    id: messageId(str(chat.id)),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: STOP[str(choice.finish_reason)] ?? 'end_turn',
    stop_sequence: null,
    usage: claudeUsageOf(chat.usage),
  });
}

/** OpenAI chat chunks (SSE bytes) → Claude's stream events (SSE bytes). */
export function chatStreamToClaude(model: string): FrameTransformer {
  const decoder = new SseDecoder();
  const encoder = new TextEncoder();
  let started = false;
  let ended = false;
  let id = '';
  let usage: Obj = {
    input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    output_tokens: 0,
  };
  let stopReason = 'end_turn';
  let blockIndex = -1;
  let open: { kind: 'text' } | { kind: 'tool'; openAiIndex: number } | null = null;

  const event = (type: string, data: Obj) =>
    encoder.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);

  function start(out: Uint8Array[]): void {
    if (started) return;
    started = true;
    out.push(
      event('message_start', {
        message: {
          id: messageId(id),
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      }),
    );
  }

  function close(out: Uint8Array[]): void {
    if (!open) return;
    out.push(event('content_block_stop', { index: blockIndex }));
    open = null;
  }

  function finish(out: Uint8Array[]): void {
    if (ended) return;
    ended = true;
    start(out);
    close(out);
    out.push(event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage }));
    out.push(event('message_stop', {}));
  }

  function onChunk(chunk: Obj, out: Uint8Array[]): void {
    if (!id && str(chunk.id)) id = str(chunk.id);
    if (isObject(chunk.usage)) usage = claudeUsageOf(chunk.usage);
    if (isObject(chunk.error)) {
      start(out);
      out.push(
        event('error', {
          error: { type: str(chunk.error.type) || 'api_error', message: str(chunk.error.message) },
        }),
      );
      return;
    }
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : null;
    if (!choice) return;
    start(out);
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (str(delta.content)) {
      if (open?.kind !== 'text') {
        close(out);
        blockIndex++;
        open = { kind: 'text' };
        out.push(
          event('content_block_start', { index: blockIndex, content_block: { type: 'text', text: '' } }),
        );
      }
      out.push(
        event('content_block_delta', {
          index: blockIndex,
          delta: { type: 'text_delta', text: delta.content },
        }),
      );
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (!isObject(call)) continue;
      const fn = isObject(call.function) ? call.function : {};
      const index = num(call.index);
      if (open?.kind !== 'tool' || open.openAiIndex !== index) {
        close(out);
        blockIndex++;
        open = { kind: 'tool', openAiIndex: index };
        out.push(
          event('content_block_start', {
            index: blockIndex,
            content_block: { type: 'tool_use', id: str(call.id), name: str(fn.name), input: {} },
          }),
        );
      }
      if (str(fn.arguments))
        out.push(
          event('content_block_delta', {
            index: blockIndex,
            delta: { type: 'input_json_delta', partial_json: fn.arguments },
          }),
        );
    }
    if (str(choice.finish_reason)) stopReason = STOP[str(choice.finish_reason)] ?? 'end_turn';
  }

  const handle = (events: ReturnType<SseDecoder['push']>, controller: FrameSink) => {
    const out: Uint8Array[] = [];
    for (const ev of events) {
      const data = ev.data.trim();
      if (data === '[DONE]') {
        finish(out);
        continue;
      }
      try {
        const chunk = JSON.parse(data);
        if (isObject(chunk)) onChunk(chunk, out);
      } catch {
        // Not JSON: nothing a Claude client could read.
      }
    }
    for (const b of out) controller.enqueue(b);
  };

  return {
    transform(bytes, controller) {
      handle(decoder.push(bytes), controller);
    },
    flush(controller) {
      handle(decoder.end(), controller);
      const out: Uint8Array[] = [];
      finish(out);
      for (const b of out) controller.enqueue(b);
    },
  };
}
