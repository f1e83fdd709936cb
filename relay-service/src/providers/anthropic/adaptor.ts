/**
 * Anthropic Claude (channel type 14): OpenAI chat requests converted to the Messages API and back. Headers are
 * Anthropic's (`x-api-key`, `anthropic-version`, passing on the client's `anthropic-version` and
 * `anthropic-beta` when it sent them) plus the admin's per-model headers (claude.model_headers_settings).
 * Claude-format calls (/v1/messages) pass through natively (native.ts).
 */
import type { Endpoint, RelayInput, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { nativeBody, nativeStream, parseNativeResponse } from './native.ts';
import {
  ANTHROPIC_DEFAULT_BASE,
  ANTHROPIC_VERSION,
  buildClaudeBody,
  claudeSettings,
  modelHeaders,
} from './request.ts';
import { parseClaudeError, parseClaudeResponse } from './response.ts';
import { claudeStreamConversion } from './stream.ts';

export const ANTHROPIC_CHANNEL_TYPE = 14;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'messages']);

type Obj = Record<string, unknown>;

function base(baseUrl: string): string {
  return (baseUrl || ANTHROPIC_DEFAULT_BASE).replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Headers the admin's model headers may not replace: the channel's credential and the body framing. */
const RESERVED = new Set(['x-api-key', 'authorization', 'content-type', 'content-length', 'host', 'accept']);

/** Comma lists joined without repeats (anthropic-beta takes several flags). */
function mergeList(...lists: (string | null)[]): string {
  const seen = new Set<string>();
  for (const list of lists) for (const v of (list ?? '').split(',')) if (v.trim()) seen.add(v.trim());
  return [...seen].join(',');
}

/**
 * Model headers are laid over the defaults, then the client's: its `anthropic-version` wins over the admin's,
 * and `anthropic-beta` is the union of the admin's flags and the client's (neither can switch the other's off).
 */
function headers(
  key: string,
  clientHeaders: Headers,
  stream: boolean,
  extra: [string, string][] = [],
): Headers {
  const h = new Headers({ 'content-type': 'application/json', 'x-api-key': key });
  for (const [name, value] of extra) {
    try {
      if (!RESERVED.has(name.toLowerCase())) h.set(name, value);
    } catch {
      // An invalid header name or value from the options is skipped rather than failing the call.
    }
  }
  h.set(
    'anthropic-version',
    clientHeaders.get('anthropic-version') ?? h.get('anthropic-version') ?? ANTHROPIC_VERSION,
  );
  const beta = mergeList(h.get('anthropic-beta'), clientHeaders.get('anthropic-beta'));
  if (beta) h.set('anthropic-beta', beta);
  if (stream) h.set('accept', 'text/event-stream');
  return h;
}

const requestHeaders = (key: string, input: RelayInput) =>
  headers(key, input.clientHeaders, input.stream, modelHeaders(claudeSettings(input), input.upstreamModel));

export function createAnthropicAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'anthropic',
    channelTypes: [ANTHROPIC_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      return {
        url: `${base(channel.baseUrl)}/v1/messages`,
        method: 'POST',
        headers: requestHeaders(channel.key, input),
        // param_override may tune the body but never the model (what is billed is what is sent).
        body:
          input.endpoint === 'messages'
            ? nativeBody(channel, input)
            : (() => {
                const body = buildClaudeBody(channel, input);
                return JSON.stringify({ ...body, ...channel.paramOverride, model: body.model });
              })(),
      };
    },
    parseResponse: (input, res) =>
      input.endpoint === 'messages'
        ? parseNativeResponse(res.body)
        : parseClaudeResponse(input, res.body, now),
    streamConversion: (input) =>
      input.endpoint === 'messages' ? nativeStream() : claudeStreamConversion(input, now),
    parseError: parseClaudeError,
    modelsRequest(channel): UpstreamRequest {
      return {
        url: `${base(channel.baseUrl)}/v1/models?limit=1000`,
        method: 'GET',
        headers: headers(channel.key, new Headers(), false),
        body: null,
      };
    },
    parseModels(body: unknown): string[] {
      const data = (body as Obj | null)?.data;
      return Array.isArray(data)
        ? data.flatMap((m) => (typeof (m as Obj)?.id === 'string' ? [(m as Obj).id as string] : []))
        : [];
    },
  };
}

export const anthropicAdaptor: SyncProviderAdaptor = createAnthropicAdaptor();
