/**
 * OpenAI chat request → Anthropic Messages request (https://docs.anthropic.com/en/api/messages). Claude wants
 * the system prompt apart, strictly alternating user/assistant turns, tool results inside a user turn, images
 * as base64 or URL sources, and `max_tokens` always set. The models-tab options (seed 000, `input.settings`)
 * decide the fallback max_tokens per model and whether a `-thinking` model suffix turns extended thinking on
 * (gateway-behaviour §5: budget = a share of max_tokens, temperature 1, no top_p).
 */

import { isObject, type Obj, str } from '../json.ts';
import {
  type ChannelConfig,
  DEFAULT_PROVIDER_SETTINGS,
  type ProviderSettings,
  type RelayInput,
} from '../types.ts';

export const ANTHROPIC_DEFAULT_BASE = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** Used when the client sets no max_tokens and claude.default_max_tokens has neither the model nor "default". */
export const DEFAULT_MAX_TOKENS = 8192;
/** Anthropic's smallest accepted thinking budget. */
const MIN_THINKING_BUDGET = 1024;
const THINKING_SUFFIX = '-thinking';

type ClaudeSettings = ProviderSettings['claude'];
export const claudeSettings = (input: RelayInput): ClaudeSettings =>
  input.settings?.claude ?? DEFAULT_PROVIDER_SETTINGS.claude;

/** A per-model setting: the exact upstream name first, then the name without `-thinking`, then "default". */
function perModel<T>(map: Record<string, T>, model: string): T | undefined {
  const bare = model.endsWith(THINKING_SUFFIX) ? model.slice(0, -THINKING_SUFFIX.length) : model;
  for (const key of [model, bare, 'default']) if (Object.hasOwn(map, key)) return map[key];
  return undefined;
}

/** claude.default_max_tokens for a model; non-positive or non-integer entries are ignored. */
export function defaultMaxTokens(settings: ClaudeSettings, model: string): number {
  const v = perModel(settings.defaultMaxTokens ?? {}, model);
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : DEFAULT_MAX_TOKENS;
}

/**
 * claude.model_headers_settings for a model (exact name, then without `-thinking`; no "default" fallback since
 * headers are opt-in per model). A value may be a string or, as new-api stores it, a list of strings (joined).
 */
export function modelHeaders(settings: ClaudeSettings, model: string): [string, string][] {
  const map = settings.modelHeaders ?? {};
  const bare = model.endsWith(THINKING_SUFFIX) ? model.slice(0, -THINKING_SUFFIX.length) : model;
  const entry = Object.hasOwn(map, model) ? map[model] : Object.hasOwn(map, bare) ? map[bare] : undefined;
  if (!isObject(entry)) return [];
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(entry as Obj)) {
    const v = Array.isArray(value) ? value.filter((x) => typeof x === 'string').join(',') : value;
    if (typeof v === 'string' && v) out.push([name, v]);
  }
  return out;
}

/**
 * Thinking budget for `maxTokens` with the admin's share. Anthropic wants 1024 ≤ budget < max_tokens, so the
 * budget is floored at 1024 and max_tokens raised above it when the share leaves no room (share 1, small max).
 */
export function thinkingBudget(maxTokens: number, share: number): { budget: number; maxTokens: number } {
  const ok = Number.isFinite(share) && share > 0 && share <= 1;
  const s = ok ? share : DEFAULT_PROVIDER_SETTINGS.claude.thinkingBudgetShare;
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens * s));
  return { budget, maxTokens: budget >= maxTokens ? budget + MIN_THINKING_BUDGET : maxTokens };
}

type Block = Obj;
type Turn = { role: 'user' | 'assistant'; content: Block[] };

/** `data:image/png;base64,....` or an http(s) URL → a Claude image source. */
function imageBlock(url: string): Block | null {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { type: 'image', source: { type: 'base64', media_type: m[1], data: m[2] } };
  if (/^https?:\/\//.test(url)) return { type: 'image', source: { type: 'url', url } };
  return null;
}

function contentBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && str(part.text)) out.push({ type: 'text', text: part.text });
    else if (part.type === 'image_url') {
      const url = isObject(part.image_url) ? str(part.image_url.url) : str(part.image_url);
      const block = imageBlock(url);
      if (block) out.push(block);
    }
  }
  return out;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return contentBlocks(content)
    .filter((b) => b.type === 'text')
    .map((b) => str(b.text))
    .join('\n');
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const v = JSON.parse(args);
    return isObject(v) ? v : { value: v };
  } catch {
    return { raw: args };
  }
}

/** Appends to the last turn when the role repeats: Claude rejects two user (or assistant) turns in a row. */
function push(turns: Turn[], role: Turn['role'], blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last && last.role === role) last.content.push(...blocks);
  else turns.push({ role, content: blocks });
}

export function toClaudeMessages(messages: unknown): { system: string; turns: Turn[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
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
        const blocks = contentBlocks(m.content);
        for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
          if (!isObject(call) || !isObject(call.function)) continue;
          blocks.push({
            type: 'tool_use',
            id: str(call.id),
            name: str(call.function.name),
            input: parseArguments(call.function.arguments),
          });
        }
        push(turns, 'assistant', blocks);
        break;
      }
      case 'tool': {
        push(turns, 'user', [
          { type: 'tool_result', tool_use_id: str(m.tool_call_id), content: textOf(m.content) },
        ]);
        break;
      }
      default:
        push(turns, 'user', contentBlocks(m.content));
    }
  }
  return { system: system.join('\n\n'), turns };
}

function toClaudeTools(tools: unknown): Block[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const out: Block[] = [];
  for (const t of tools) {
    if (!isObject(t) || !isObject(t.function)) continue;
    const fn = t.function;
    out.push({
      name: str(fn.name),
      ...(str(fn.description) ? { description: fn.description } : {}),
      input_schema: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
    });
  }
  return out.length ? out : undefined;
}

function toClaudeToolChoice(choice: unknown): Block | undefined {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  if (isObject(choice) && isObject(choice.function)) return { type: 'tool', name: str(choice.function.name) };
  return undefined;
}

/**
 * The Claude model and thinking flag for an upstream name: a `-thinking` suffix means extended thinking only
 * while claude.thinking_adapter_enabled is on; when it is off the name goes upstream unchanged.
 */
export function thinkingModel(model: string, adapterEnabled = true): { model: string; thinking: boolean } {
  return adapterEnabled && model.endsWith(THINKING_SUFFIX)
    ? { model: model.slice(0, -THINKING_SUFFIX.length), thinking: true }
    : { model, thinking: false };
}

export function buildClaudeBody(_channel: ChannelConfig, input: RelayInput): Obj {
  const body = input.body as Obj;
  const settings = claudeSettings(input);
  const { model, thinking } = thinkingModel(input.upstreamModel, settings.thinkingAdapterEnabled);
  const { system, turns } = toClaudeMessages(body.messages);
  const maxTokens = [body.max_completion_tokens, body.max_tokens].find(
    (v) => typeof v === 'number' && v > 0,
  ) as number | undefined;
  const out: Obj = {
    model,
    max_tokens: maxTokens ?? defaultMaxTokens(settings, input.upstreamModel),
    messages: turns,
  };
  // json_schema is Claude's structured output (output_config.format, generally available: no beta header);
  // json_object has no native switch and stays an instruction.
  const format = outputFormat(body.response_format);
  if (format) out.output_config = { format };
  const json = format ? '' : jsonModeInstruction(body.response_format);
  const fullSystem = [system, json].filter(Boolean).join('\n\n');
  if (fullSystem) out.system = fullSystem;
  if (input.stream) out.stream = true;
  if (typeof body.temperature === 'number') out.temperature = Math.min(1, body.temperature);
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.top_k === 'number') out.top_k = body.top_k;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  if (stop?.length) out.stop_sequences = stop;
  const tools = toClaudeTools(body.tools);
  if (tools) out.tools = tools;
  const choice = toClaudeToolChoice(body.tool_choice);
  if (choice && tools) out.tool_choice = choice;
  if (str(body.user)) out.metadata = { user_id: body.user };
  // OpenAI's reasoning_effort (also what a Responses `reasoning.effort` becomes) turns extended thinking on with
  // a budget per level, as the -thinking suffix does with the admin's share.
  const effort = str(body.reasoning_effort);
  // Anthropic refuses thinking with a forced tool choice: a forced tool (tool-forced JSON) wins over the effort.
  const forced = out.tool_choice !== undefined && (choice?.type === 'any' || choice?.type === 'tool');
  const effortBudget = Object.hasOwn(EFFORT_BUDGET, effort) && !forced ? EFFORT_BUDGET[effort] : undefined;
  if (thinking || effortBudget) {
    const { budget, maxTokens: raised } = effortBudget
      ? thinkingBudgetOf(out.max_tokens as number, effortBudget)
      : thinkingBudget(out.max_tokens as number, settings.thinkingBudgetShare);
    out.max_tokens = raised;
    out.thinking = { type: 'enabled', budget_tokens: budget };
    out.temperature = 1;
    delete out.top_p;
    delete out.top_k;
  }
  return out;
}

/** Thinking budgets for OpenAI's reasoning_effort levels (Anthropic's minimum budget is 1024). */
const EFFORT_BUDGET: Record<string, number> = {
  minimal: MIN_THINKING_BUDGET,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};

/** A fixed budget, with max_tokens raised above it when it leaves no room for the answer. */
function thinkingBudgetOf(maxTokens: number, budget: number): { budget: number; maxTokens: number } {
  return { budget, maxTokens: budget >= maxTokens ? budget + MIN_THINKING_BUDGET : maxTokens };
}

/**
 * OpenAI's `response_format: {type: 'json_schema', json_schema: {schema}}` → Claude's structured output format
 * (`output_config.format`, https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs); null for
 * anything else.
 */
export function outputFormat(format: unknown): Obj | null {
  if (!isObject(format) || format.type !== 'json_schema') return null;
  const spec = isObject(format.json_schema) ? format.json_schema : {};
  return isObject(spec.schema) ? { type: 'json_schema', schema: spec.schema } : null;
}

/**
 * Claude has no JSON mode switch: OpenAI's response_format becomes a system instruction (with the schema for
 * json_schema), which is how Anthropic documents getting JSON-only answers.
 */
export function jsonModeInstruction(format: unknown): string {
  if (!isObject(format)) return '';
  if (format.type === 'json_object')
    return 'Respond only with a single valid JSON object, without any other text.';
  if (format.type === 'json_schema') {
    const spec = isObject(format.json_schema) ? format.json_schema : {};
    const schema = isObject(spec.schema) ? JSON.stringify(spec.schema) : '{}';
    return `Respond only with a single valid JSON object matching this JSON schema, without any other text: ${schema}`;
  }
  return '';
}
