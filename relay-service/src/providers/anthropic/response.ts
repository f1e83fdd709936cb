/**
 * Anthropic Messages response → OpenAI chat completion, and Anthropic's error envelope
 * `{"type":"error","error":{"type","message"}}` → the neutral UpstreamError.
 */

import { isObject, type Obj, str } from '../json.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';
import { claudeUsage, claudeUsageParts, openAIUsageOf } from './usage.ts';

/** Claude stop_reason → OpenAI finish_reason. */
export function finishReason(stop: unknown): string | null {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return stop == null ? null : 'stop';
  }
}

export function chatCompletionId(claudeId: string): string {
  return `chatcmpl-${claudeId.replace(/^msg_/, '')}`;
}

export function parseClaudeResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const text = new TextDecoder().decode(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  const msg = isObject(json) ? json : {};
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: Obj[] = [];
  for (const block of Array.isArray(msg.content) ? msg.content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text') texts.push(str(block.text));
    else if (block.type === 'thinking') thinking.push(str(block.thinking));
    else if (block.type === 'tool_use')
      toolCalls.push({
        id: str(block.id),
        type: 'function',
        function: { name: str(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
  }
  const u = claudeUsage(claudeUsageParts(msg.usage));
  const message: Obj = { role: 'assistant', content: texts.length ? texts.join('') : null };
  if (thinking.length) message.reasoning_content = thinking.join('');
  if (toolCalls.length) message.tool_calls = toolCalls;
  const out: Obj = {
    id: chatCompletionId(str(msg.id)),
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: input.upstreamModel,
    choices: [{ index: 0, message, finish_reason: finishReason(msg.stop_reason), logprobs: null }],
  };
  if (u) out.usage = openAIUsageOf(u);
  const completionText = [
    ...thinking,
    ...texts,
    ...toolCalls.map((c) => str((c.function as Obj).arguments)),
  ].join('');
  return { body: JSON.stringify(out), contentType: 'application/json', usage: u, completionText };
}

export function parseClaudeError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  const err = isObject(json) && isObject(json.error) ? json.error : null;
  if (err && str(err.message)) {
    const type = str(err.type) || 'upstream_error';
    return { status: res.status, message: str(err.message), type, code: type };
  }
  const plain = res.bodyText
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
  return {
    status: res.status,
    message: plain || `upstream returned status ${res.status}`,
    type: 'upstream_error',
    code: null,
  };
}
