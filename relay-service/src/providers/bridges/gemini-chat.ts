/**
 * Gemini generateContent (inbound) ⇄ OpenAI chat (what OpenAI-family and Claude channels are reached with). Lets
 * a Gemini client (the `@google/genai` SDK) reach any channel that serves chat: the GenerateContentRequest is
 * turned into a chat request, the chat answer — whole or streamed — back into GenerateContentResponse objects.
 * Thought parts the client sends back are dropped (no chat upstream can use them); `reasoning_content` from the
 * upstream comes back as `thought: true` parts. Google-only tools (search, code execution) are dropped.
 */

import type { FrameTransformer } from '../frames.ts';
import { isObject, num, type Obj, str } from '../json.ts';
import { SseDecoder } from '../sse.ts';

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Gemini's Schema is an OpenAPI subset with upper-case types (`OBJECT`); chat tools want JSON Schema. */
export function geminiSchemaToJson(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchemaToJson);
  if (!isObject(schema)) return schema;
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'propertyOrdering' || k === 'nullable') continue;
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'properties' && isObject(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, geminiSchemaToJson(s)]));
    else if (k === 'items' || k === 'anyOf') out[k] = geminiSchemaToJson(v);
    else out[k] = v;
  }
  // nullable: true is JSON Schema's ["type", "null"].
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!isObject(content)) return '';
  return arr(content.parts)
    .map((p) => (isObject(p) && p.thought !== true ? str(p.text) : ''))
    .filter(Boolean)
    .join('\n');
}

/** An inline or file part as a chat content part (images and wav/mp3 audio; other media cannot travel). */
function mediaPart(part: Obj): Obj | null {
  const inline = isObject(part.inlineData)
    ? part.inlineData
    : isObject(part.inline_data)
      ? part.inline_data
      : null;
  if (inline) {
    const mime = str(inline.mimeType ?? inline.mime_type);
    const data = str(inline.data);
    if (mime === 'audio/wav' || mime === 'audio/mp3' || mime === 'audio/mpeg')
      return { type: 'input_audio', input_audio: { data, format: mime === 'audio/wav' ? 'wav' : 'mp3' } };
    return { type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } };
  }
  const file = isObject(part.fileData) ? part.fileData : isObject(part.file_data) ? part.file_data : null;
  if (file) return { type: 'image_url', image_url: { url: str(file.fileUri ?? file.file_uri) } };
  return null;
}

function toolsOf(body: Obj): Obj[] {
  const out: Obj[] = [];
  for (const tool of arr(body.tools)) {
    if (!isObject(tool)) continue;
    for (const fn of arr(tool.functionDeclarations ?? tool.function_declarations)) {
      if (!isObject(fn) || !str(fn.name)) continue;
      const params =
        fn.parametersJsonSchema ??
        fn.parameters_json_schema ??
        (fn.parameters !== undefined ? geminiSchemaToJson(fn.parameters) : undefined);
      out.push({
        type: 'function',
        function: {
          name: fn.name,
          ...(str(fn.description) ? { description: fn.description } : {}),
          parameters: isObject(params) ? params : { type: 'object', properties: {} },
        },
      });
    }
  }
  return out;
}

function toolChoiceOf(body: Obj): unknown {
  const toolConfig = isObject(body.toolConfig)
    ? body.toolConfig
    : isObject(body.tool_config)
      ? body.tool_config
      : {};
  const cfg = isObject(toolConfig.functionCallingConfig)
    ? toolConfig.functionCallingConfig
    : isObject(toolConfig.function_calling_config)
      ? toolConfig.function_calling_config
      : null;
  if (!cfg) return undefined;
  const mode = str(cfg.mode).toUpperCase();
  if (mode === 'NONE') return 'none';
  if (mode === 'ANY') {
    const allowed = arr(cfg.allowedFunctionNames ?? cfg.allowed_function_names);
    // One allowed function is chat's named choice; several cannot be expressed, so any tool is required.
    return allowed.length === 1 ? { type: 'function', function: { name: str(allowed[0]) } } : 'required';
  }
  if (mode === 'AUTO' || mode === 'VALIDATED') return 'auto';
  return undefined;
}

function generationConfig(body: Obj, out: Obj): void {
  const g = isObject(body.generationConfig)
    ? body.generationConfig
    : isObject(body.generation_config)
      ? body.generation_config
      : {};
  const pick = (camel: string, snake: string) => g[camel] ?? g[snake];
  const copyNum = (camel: string, snake: string, to: string) => {
    const v = pick(camel, snake);
    if (typeof v === 'number') out[to] = v;
  };
  copyNum('temperature', 'temperature', 'temperature');
  copyNum('topP', 'top_p', 'top_p');
  copyNum('maxOutputTokens', 'max_output_tokens', 'max_tokens');
  copyNum('candidateCount', 'candidate_count', 'n');
  copyNum('presencePenalty', 'presence_penalty', 'presence_penalty');
  copyNum('frequencyPenalty', 'frequency_penalty', 'frequency_penalty');
  copyNum('seed', 'seed', 'seed');
  const stop = pick('stopSequences', 'stop_sequences');
  if (Array.isArray(stop) && stop.length) out.stop = stop;
  const jsonSchema = pick('responseJsonSchema', 'response_json_schema');
  const schema = pick('responseSchema', 'response_schema');
  if (isObject(jsonSchema) || isObject(schema))
    out.response_format = {
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: isObject(jsonSchema) ? jsonSchema : geminiSchemaToJson(schema),
      },
    };
  else if (pick('responseMimeType', 'response_mime_type') === 'application/json')
    out.response_format = { type: 'json_object' };
}

/**
 * A GenerateContentRequest body → an OpenAI chat request body (stream usage always requested). Function calls
 * without ids (most Gemini clients) get generated ones; their responses are matched by id, else by name in order.
 */
export function geminiToChat(body: Obj, stream: boolean): Obj {
  const messages: Obj[] = [];
  const system = textOfContent(body.systemInstruction ?? body.system_instruction);
  if (system) messages.push({ role: 'system', content: system });
  let generated = 0;
  // Calls of the latest model turn not yet answered, for responses that carry no id.
  let pending: { id: string; name: string }[] = [];
  for (const content of arr(body.contents)) {
    if (!isObject(content)) continue;
    const parts = arr(content.parts).filter(isObject);
    if (content.role === 'model') {
      const text: string[] = [];
      const calls: Obj[] = [];
      pending = [];
      for (const p of parts) {
        if (p.thought === true) continue;
        const fc = isObject(p.functionCall)
          ? p.functionCall
          : isObject(p.function_call)
            ? p.function_call
            : null;
        if (fc) {
          const id = str(fc.id) || `call_${generated++}`;
          pending.push({ id, name: str(fc.name) });
          calls.push({
            id,
            type: 'function',
            function: { name: str(fc.name), arguments: JSON.stringify(fc.args ?? {}) },
          });
        } else if (typeof p.text === 'string') text.push(p.text);
      }
      const msg: Obj = { role: 'assistant', content: text.length ? text.join('') : null };
      if (calls.length) msg.tool_calls = calls;
      messages.push(msg);
      continue;
    }
    // A user (or "function") turn: function responses become tool messages, before the user's own content.
    const user: Obj[] = [];
    for (const p of parts) {
      const fr = isObject(p.functionResponse)
        ? p.functionResponse
        : isObject(p.function_response)
          ? p.function_response
          : null;
      if (fr) {
        const byId = str(fr.id) ? pending.findIndex((c) => c.id === fr.id) : -1;
        const at = byId >= 0 ? byId : pending.findIndex((c) => c.name === str(fr.name));
        const id = str(fr.id) || (at >= 0 ? pending[at]!.id : `call_${generated++}`);
        if (at >= 0) pending.splice(at, 1);
        messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(fr.response ?? {}) });
      } else if (typeof p.text === 'string' && p.thought !== true) user.push({ type: 'text', text: p.text });
      else {
        const media = mediaPart(p);
        if (media) user.push(media);
      }
    }
    if (user.length === 1 && user[0]?.type === 'text') messages.push({ role: 'user', content: user[0].text });
    else if (user.length) messages.push({ role: 'user', content: user });
  }
  const out: Obj = { model: body.model, messages };
  generationConfig(body, out);
  const tools = toolsOf(body);
  if (tools.length) {
    out.tools = tools;
    const choice = toolChoiceOf(body);
    if (choice !== undefined) out.tool_choice = choice;
  }
  if (stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

const FINISH: Record<string, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  function_call: 'STOP',
  content_filter: 'SAFETY',
};

/** Chat usage → Gemini's usageMetadata (candidates exclude thoughts; the prompt includes cached tokens). */
function usageMetadataOf(u: unknown): Obj | null {
  if (!isObject(u)) return null;
  const prompt = num(u.prompt_tokens);
  const completion = num(u.completion_tokens);
  const reasoning = isObject(u.completion_tokens_details)
    ? num(u.completion_tokens_details.reasoning_tokens)
    : 0;
  const cached = isObject(u.prompt_tokens_details) ? num(u.prompt_tokens_details.cached_tokens) : 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - reasoning),
    totalTokenCount: prompt + completion,
    ...(reasoning ? { thoughtsTokenCount: reasoning } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
  };
}

function parseArgs(raw: unknown): unknown {
  try {
    const v = JSON.parse(str(raw) || '{}');
    return isObject(v) ? v : { value: v };
  } catch {
    return { raw: str(raw) };
  }
}

const responseId = (chatId: string) =>
  chatId.replace(/^chatcmpl-/, '') || crypto.randomUUID().replaceAll('-', '');

/** An OpenAI chat completion (JSON text) → a GenerateContentResponse (JSON text). */
export function chatToGemini(chatJson: string, model: string): string {
  let json: unknown;
  try {
    json = JSON.parse(chatJson);
  } catch {
    json = {};
  }
  const chat = isObject(json) ? json : {};
  const candidates = arr(chat.choices)
    .filter(isObject)
    .map((choice, i) => {
      const msg = isObject(choice.message) ? choice.message : {};
      const parts: Obj[] = [];
      if (str(msg.reasoning_content)) parts.push({ text: msg.reasoning_content, thought: true });
      if (str(msg.content)) parts.push({ text: msg.content });
      for (const call of arr(msg.tool_calls)) {
        if (!isObject(call) || !isObject(call.function)) continue;
        parts.push({
          functionCall: {
            id: str(call.id),
            name: str(call.function.name),
            args: parseArgs(call.function.arguments),
          },
        });
      }
      if (!parts.length) parts.push({ text: '' });
      return {
        content: { role: 'model', parts },
        finishReason: FINISH[str(choice.finish_reason)] ?? 'STOP',
        index: typeof choice.index === 'number' ? choice.index : i,
      };
    });
  const usage = usageMetadataOf(chat.usage);
  return JSON.stringify({
    candidates,
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: model,
    responseId: responseId(str(chat.id)),
  });
}

type ChoiceState = {
  finish: string | null;
  /** Tool calls by chat index; Gemini sends whole function calls, so fragments are joined until the end. */
  calls: Map<number, { id: string; name: string; args: string }>;
};

/** OpenAI chat chunks (SSE bytes) → Gemini `data: {GenerateContentResponse}` events (what alt=sse streams). */
export function chatStreamToGemini(model: string): FrameTransformer {
  const decoder = new SseDecoder();
  const encoder = new TextEncoder();
  const choices = new Map<number, ChoiceState>();
  let id = '';
  let usage: Obj | null = null;
  let ended = false;

  const emit = (out: Uint8Array[], data: Obj) =>
    out.push(encoder.encode(`data: ${JSON.stringify(data)}\r\n\r\n`));
  const response = (candidates: Obj[], withUsage: boolean): Obj => ({
    candidates,
    ...(withUsage && usage ? { usageMetadata: usage } : {}),
    modelVersion: model,
    responseId: responseId(id),
  });
  const state = (index: number) => {
    let s = choices.get(index);
    if (!s) {
      s = { finish: null, calls: new Map() };
      choices.set(index, s);
    }
    return s;
  };

  function finish(out: Uint8Array[]): void {
    if (ended) return;
    ended = true;
    if (choices.size === 0) state(0);
    const candidates = [...choices.entries()].map(([index, s]) => {
      const parts: Obj[] = [...s.calls.values()].map((c) => ({
        functionCall: { id: c.id, name: c.name, args: parseArgs(c.args) },
      }));
      if (!parts.length) parts.push({ text: '' });
      return { content: { role: 'model', parts }, finishReason: s.finish ?? 'STOP', index };
    });
    emit(out, response(candidates, true));
  }

  function onChunk(chunk: Obj, out: Uint8Array[]): void {
    if (!id && str(chunk.id)) id = str(chunk.id);
    const u = usageMetadataOf(chunk.usage);
    if (u) usage = u;
    if (isObject(chunk.error)) {
      ended = true;
      emit(out, {
        error: {
          code: 500,
          message: str(chunk.error.message) || 'upstream stream error',
          status: 'INTERNAL',
        },
      });
      return;
    }
    for (const choice of arr(chunk.choices)) {
      if (!isObject(choice)) continue;
      const index = num(choice.index);
      const s = state(index);
      const delta = isObject(choice.delta) ? choice.delta : {};
      const parts: Obj[] = [];
      if (str(delta.reasoning_content)) parts.push({ text: delta.reasoning_content, thought: true });
      if (str(delta.content)) parts.push({ text: delta.content });
      if (parts.length) emit(out, response([{ content: { role: 'model', parts }, index }], false));
      for (const call of arr(delta.tool_calls)) {
        if (!isObject(call)) continue;
        const fn = isObject(call.function) ? call.function : {};
        const at = num(call.index);
        const c = s.calls.get(at) ?? { id: '', name: '', args: '' };
        if (str(call.id)) c.id = str(call.id);
        if (str(fn.name)) c.name += str(fn.name);
        c.args += str(fn.arguments);
        s.calls.set(at, c);
      }
      if (str(choice.finish_reason)) s.finish = FINISH[str(choice.finish_reason)] ?? 'STOP';
    }
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
        // Not JSON: nothing a Gemini client could read.
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
