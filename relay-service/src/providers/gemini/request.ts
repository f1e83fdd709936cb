/**
 * OpenAI chat request → Gemini `generateContent` request (https://ai.google.dev/api/generate-content). Gemini
 * wants the system prompt apart (`systemInstruction`), turns with roles `user`/`model` (consecutive same-role
 * messages merged), images as inline base64 or file URIs, tool results as `functionResponse` parts carrying the
 * function NAME (OpenAI only carries the call id, so it is looked up from the earlier assistant tool call), and
 * sampling options under `generationConfig`.
 */

import { isObject, type Obj, str } from '../json.ts';
import { DEFAULT_PROVIDER_SETTINGS, type ProviderSettings, type RelayInput } from '../types.ts';

export const GEMINI_DEFAULT_BASE = 'https://generativelanguage.googleapis.com';
export const GEMINI_DEFAULT_VERSION = 'v1beta';

/** Every category the API accepts a threshold for (gemini.safety_settings keys, plus "default"). */
export const HARM_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
] as const;

/** Thinking budgets for OpenAI's reasoning_effort (Gemini 2.5 accepts 0–24576 on Flash, 128–32768 on Pro). */
export const EFFORT_BUDGET: Record<string, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };

type Part = Obj;
type Content = { role: 'user' | 'model'; parts: Part[] };

const settingsOf = (input: RelayInput): ProviderSettings => input.settings ?? DEFAULT_PROVIDER_SETTINGS;

/** The API version for a model: gemini.version_settings[model], else its "default", else v1beta. */
export function geminiVersion(settings: ProviderSettings | undefined, model: string): string {
  const v = (settings ?? DEFAULT_PROVIDER_SETTINGS).gemini.versionSettings;
  return v[model] || v.default || GEMINI_DEFAULT_VERSION;
}

export function geminiBase(baseUrl: string): string {
  return (baseUrl || GEMINI_DEFAULT_BASE).replace(/\/+$/, '');
}

/** `{base}/{version}/models/{model}:generateContent` or `:streamGenerateContent?alt=sse`. */
export function generateUrl(baseUrl: string, version: string, model: string, stream: boolean): string {
  const m = encodeURIComponent(model);
  return stream
    ? `${geminiBase(baseUrl)}/${version}/models/${m}:streamGenerateContent?alt=sse`
    : `${geminiBase(baseUrl)}/${version}/models/${m}:generateContent`;
}

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  pdf: 'application/pdf',
};

/** data URL → inlineData; http(s) URL → fileData (mime type guessed from the extension when obvious). */
function mediaPart(url: string): Part | null {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { inlineData: { mimeType: m[1], data: m[2] } };
  if (/^https?:\/\//.test(url)) {
    const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
    const mimeType = ext ? MIME_BY_EXT[ext] : undefined;
    return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
  }
  return null;
}

function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: Part[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && str(part.text)) out.push({ text: part.text });
    else if (part.type === 'image_url') {
      const url = isObject(part.image_url) ? str(part.image_url.url) : str(part.image_url);
      const p = mediaPart(url);
      if (p) out.push(p);
    } else if (part.type === 'input_audio' && isObject(part.input_audio)) {
      const a = part.input_audio;
      if (str(a.data))
        out.push({ inlineData: { mimeType: `audio/${str(a.format) || 'wav'}`, data: a.data } });
    } else if (part.type === 'file' && isObject(part.file)) {
      const p = mediaPart(str(part.file.file_data));
      if (p) out.push(p);
    }
  }
  return out;
}

function textOf(content: unknown): string {
  return contentParts(content)
    .map((p) => str(p.text))
    .filter(Boolean)
    .join('\n');
}

/** Tool call arguments (a JSON string) → the Struct Gemini wants. */
function parseArgs(args: unknown): Obj {
  if (isObject(args)) return args;
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const v = JSON.parse(args);
    return isObject(v) ? v : { value: v };
  } catch {
    return { raw: args };
  }
}

/** A tool result → functionResponse.response (must be an object): JSON objects as they are, else wrapped. */
function toolResponse(content: unknown): Obj {
  const text = typeof content === 'string' ? content : textOf(content);
  try {
    const v = JSON.parse(text);
    if (isObject(v)) return v;
  } catch {
    // not JSON: wrap the text
  }
  return { content: text };
}

function push(contents: Content[], role: Content['role'], parts: Part[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

/**
 * Gemini 3 rejects replayed functionCall parts without the `thoughtSignature` it issued (400 "Function call is
 * missing a thought_signature"); OpenAI clients cannot carry it, so the first call of each replayed assistant turn
 * gets Google's documented sentinel that skips the check (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';
const needsSignature = (model: string) => /^gemini-3[.-]/.test(model);

export function toGeminiContents(messages: unknown, model = ''): { system: string; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  /** tool_call id → function name, from the assistant turns seen so far. */
  const names = new Map<string, string>();
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isObject(m)) continue;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const t = textOf(m.content);
        if (t) system.push(t);
        break;
      }
      case 'assistant': {
        const parts = contentParts(m.content);
        for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
          if (!isObject(call) || !isObject(call.function)) continue;
          const name = str(call.function.name);
          if (str(call.id)) names.set(str(call.id), name);
          const part: Part = { functionCall: { name, args: parseArgs(call.function.arguments) } };
          if (needsSignature(model) && !parts.some((p) => p.functionCall))
            part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
          parts.push(part);
        }
        push(contents, 'model', parts);
        break;
      }
      case 'tool': {
        const name = names.get(str(m.tool_call_id)) ?? str(m.name);
        push(contents, 'user', [{ functionResponse: { name, response: toolResponse(m.content) } }]);
        break;
      }
      default:
        push(contents, 'user', contentParts(m.content));
    }
  }
  return { system: system.join('\n\n'), contents };
}

/**
 * JSON Schema → the OpenAPI-subset Schema Gemini accepts. Kept keywords: type, format (string: only `enum` and
 * `date-time`, the ones Gemini takes), description, nullable, enum, items, properties, required, anyOf,
 * min/maxItems, min/maxLength, min/maxProperties, minimum, maximum, pattern, title, default, example,
 * propertyOrdering. Everything else is dropped — notably `$schema`, `$id`, `$ref`, `$defs`, `definitions`,
 * `additionalProperties`, `patternProperties`, `exclusiveMinimum/Maximum`, `examples`, `strict`, `const` (turned
 * into a one-value enum) — since Gemini answers 400 "Invalid JSON payload" on unknown fields. A type list
 * ["string","null"] becomes type "string" + nullable. Empty `properties` are dropped (Gemini rejects them).
 */
export function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (!isObject(schema)) return schema;
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    switch (k) {
      case 'type':
        if (Array.isArray(v)) {
          const types = v.filter((t) => t !== 'null');
          if (types.length < v.length) out.nullable = true;
          if (types[0] !== undefined) out.type = types[0];
        } else out.type = v;
        break;
      case 'properties':
        if (isObject(v) && Object.keys(v).length > 0)
          out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, cleanSchema(s)]));
        break;
      case 'items':
      case 'anyOf':
        out[k] = cleanSchema(v);
        break;
      case 'const':
        out.enum = [v];
        break;
      case 'format':
        if (v === 'enum' || v === 'date-time' || schema.type !== 'string') out.format = v;
        break;
      case 'description':
      case 'nullable':
      case 'enum':
      case 'required':
      case 'minItems':
      case 'maxItems':
      case 'minLength':
      case 'maxLength':
      case 'minProperties':
      case 'maxProperties':
      case 'minimum':
      case 'maximum':
      case 'pattern':
      case 'title':
      case 'default':
      case 'example':
      case 'propertyOrdering':
        out[k] = v;
        break;
      default:
      // dropped: see the doc comment
    }
  }
  // `required` may only name properties that remain.
  if (Array.isArray(out.required)) {
    const props = isObject(out.properties) ? out.properties : {};
    out.required = out.required.filter((r) => typeof r === 'string' && r in props);
    if ((out.required as unknown[]).length === 0) delete out.required;
  }
  return out;
}

function toFunctionDeclarations(tools: unknown): Obj[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const out: Obj[] = [];
  for (const t of tools) {
    if (!isObject(t) || !isObject(t.function)) continue;
    const fn = t.function;
    const decl: Obj = { name: str(fn.name) };
    if (str(fn.description)) decl.description = fn.description;
    const params = cleanSchema(fn.parameters);
    // A parameterless function: Gemini rejects an OBJECT schema without properties, so send none.
    if (isObject(params) && isObject(params.properties)) decl.parameters = params;
    out.push(decl);
  }
  return out.length ? out : undefined;
}

function toToolConfig(choice: unknown): Obj | undefined {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (isObject(choice) && isObject(choice.function))
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [str(choice.function.name)] } };
  return undefined;
}

/** One entry per harm category: its own gemini.safety_settings value, else "default", else OFF. */
export function safetySettings(settings: ProviderSettings | undefined): Obj[] {
  const s = (settings ?? DEFAULT_PROVIDER_SETTINGS).gemini.safetySettings;
  return HARM_CATEGORIES.map((category) => {
    let threshold = s[category] || s.default || 'OFF';
    // Civic integrity does not take OFF on every model; BLOCK_NONE is its equivalent (gateway-behaviour §5).
    if (category === 'HARM_CATEGORY_CIVIC_INTEGRITY' && threshold === 'OFF') threshold = 'BLOCK_NONE';
    return { category, threshold };
  });
}

/**
 * Model name suffixes for thinking: `-thinking` → thoughts included (budget left to the model), `-thinking-<n>` →
 * budget n, `-nothinking` → budget 0 (thinking off). The suffix is removed from the upstream model name.
 */
export function thinkingModel(model: string): { model: string; thinking: Obj | null } {
  const budget = /^(.*)-thinking-(\d+)$/.exec(model);
  if (budget)
    return { model: budget[1]!, thinking: { includeThoughts: true, thinkingBudget: Number(budget[2]) } };
  if (model.endsWith('-thinking'))
    return { model: model.slice(0, -'-thinking'.length), thinking: { includeThoughts: true } };
  if (model.endsWith('-nothinking'))
    return { model: model.slice(0, -'-nothinking'.length), thinking: { thinkingBudget: 0 } };
  return { model, thinking: null };
}

export function buildGeminiBody(input: RelayInput): { model: string; body: Obj } {
  const body = input.body as Obj;
  const { model, thinking: suffixThinking } = thinkingModel(input.upstreamModel);
  const { system, contents } = toGeminiContents(body.messages, model);
  const out: Obj = { contents };
  if (system) out.systemInstruction = { parts: [{ text: system }] };

  const gen: Obj = {};
  const maxTokens = [body.max_completion_tokens, body.max_tokens].find((v) => typeof v === 'number' && v > 0);
  if (maxTokens !== undefined) gen.maxOutputTokens = maxTokens;
  if (typeof body.temperature === 'number') gen.temperature = body.temperature;
  if (typeof body.top_p === 'number') gen.topP = body.top_p;
  if (typeof body.top_k === 'number') gen.topK = body.top_k;
  if (typeof body.n === 'number' && body.n > 1) gen.candidateCount = body.n;
  if (typeof body.presence_penalty === 'number') gen.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') gen.frequencyPenalty = body.frequency_penalty;
  if (typeof body.seed === 'number') gen.seed = body.seed;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  if (stop?.length) gen.stopSequences = stop;
  const rf = isObject(body.response_format) ? body.response_format : null;
  if (rf?.type === 'json_object') gen.responseMimeType = 'application/json';
  else if (rf?.type === 'json_schema') {
    gen.responseMimeType = 'application/json';
    const js = isObject(rf.json_schema) ? rf.json_schema : {};
    if (isObject(js.schema)) gen.responseSchema = cleanSchema(js.schema);
  }
  const effort = str(body.reasoning_effort);
  const thinking =
    suffixThinking ??
    (effort === 'none'
      ? { thinkingBudget: 0 }
      : Object.hasOwn(EFFORT_BUDGET, effort)
        ? { includeThoughts: true, thinkingBudget: EFFORT_BUDGET[effort] }
        : null);
  if (thinking) gen.thinkingConfig = thinking;
  if (Object.keys(gen).length) out.generationConfig = gen;

  const decls = toFunctionDeclarations(body.tools);
  const tools: Obj[] = decls ? [{ functionDeclarations: decls }] : [];
  // OpenAI's web search option → Gemini's built-in Google Search grounding tool.
  if (isObject(body.web_search_options)) tools.push({ googleSearch: {} });
  if (tools.length) out.tools = tools;
  if (decls) {
    const cfg = toToolConfig(body.tool_choice);
    if (cfg) out.toolConfig = cfg;
  }
  out.safetySettings = safetySettings(settingsOf(input));
  return { model, body: out };
}
