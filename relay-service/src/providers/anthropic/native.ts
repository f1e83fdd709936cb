/**
 * Claude clients on a Claude channel: the Messages body and the answer pass through (model replaced,
 * param_override merged), so nothing the client relies on — thinking signatures, cache_control, beta features —
 * is lost in conversion. Usage and text are read on the way for billing. The models-tab options apply as on the
 * chat path, but only where the client left a gap: max_tokens when absent, and the `-thinking` suffix (adapter
 * on) adds a thinking block only when the client sent none.
 */

import { isObject, type Obj, str } from '../json.ts';
import { SseDecoder } from '../sse.ts';
import type { ChannelConfig, ParsedResponse, RelayInput, StreamConversion } from '../types.ts';
import { claudeSettings, defaultMaxTokens, thinkingBudget, thinkingModel } from './request.ts';
import { type ClaudeUsageParts, claudeUsage, claudeUsageParts } from './usage.ts';

export function nativeBody(channel: ChannelConfig, input: RelayInput): string {
  const body = input.body as Obj;
  const settings = claudeSettings(input);
  const { model, thinking } = thinkingModel(input.upstreamModel, settings.thinkingAdapterEnabled);
  const out: Obj = { ...body, ...channel.paramOverride, model, ...(input.stream ? { stream: true } : {}) };
  if (!(typeof out.max_tokens === 'number' && out.max_tokens > 0))
    out.max_tokens = defaultMaxTokens(settings, input.upstreamModel);
  if (thinking && !isObject(out.thinking)) {
    const { budget, maxTokens } = thinkingBudget(out.max_tokens as number, settings.thinkingBudgetShare);
    out.max_tokens = maxTokens;
    out.thinking = { type: 'enabled', budget_tokens: budget };
    out.temperature = 1;
    delete out.top_p;
    delete out.top_k;
  }
  return JSON.stringify(out);
}

function blocksText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((b) =>
      isObject(b)
        ? str(b.text) || str(b.thinking) || (b.type === 'tool_use' ? JSON.stringify(b.input ?? {}) : '')
        : '',
    )
    .join('');
}

export function parseNativeResponse(body: Uint8Array): ParsedResponse {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    json = null;
  }
  const msg = isObject(json) ? json : {};
  return {
    body: body as Uint8Array<ArrayBuffer>,
    contentType: 'application/json',
    usage: claudeUsage(claudeUsageParts(msg.usage)),
    completionText: blocksText(msg.content),
  };
}

/** Passes Claude's events through unchanged, tallying usage and text. */
export function nativeStream(): StreamConversion {
  const decoder = new SseDecoder();
  const parts: ClaudeUsageParts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let sawUsage = false;
  let sawFirstToken = false;
  const text: string[] = [];
  const read = (events: ReturnType<SseDecoder['push']>) => {
    for (const ev of events) {
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        continue;
      }
      if (!isObject(data)) continue;
      const type = ev.event ?? str(data.type);
      if (type === 'message_start' && isObject(data.message)) {
        const u = claudeUsageParts(data.message.usage);
        if (u) Object.assign(parts, u);
        sawUsage ||= u !== null;
      } else if (type === 'message_delta') {
        const u = claudeUsageParts(data.usage);
        if (u) {
          sawUsage = true;
          parts.output = u.output || parts.output;
          if (u.input) parts.input = u.input;
          if (u.cacheRead) parts.cacheRead = u.cacheRead;
          if (u.cacheWrite) parts.cacheWrite = u.cacheWrite;
        }
      } else if (type === 'content_block_delta' && isObject(data.delta)) {
        const d = data.delta;
        const t = str(d.text) || str(d.thinking) || str(d.partial_json);
        if (t) {
          text.push(t);
          sawFirstToken = true;
        }
      }
    }
  };
  return {
    transformer: {
      transform(bytes, controller) {
        read(decoder.push(bytes));
        controller.enqueue(bytes);
      },
      flush() {
        read(decoder.end());
      },
    },
    tally: () => ({
      usage: sawUsage ? claudeUsage(parts) : null,
      completionText: text.join(''),
      sawFirstToken,
    }),
  };
}
