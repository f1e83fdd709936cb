/**
 * Anthropic Claude (channel type 14): OpenAI chat requests converted to the Messages API and back. Headers are
 * Anthropic's (`x-api-key`, `anthropic-version`, passing on the client's `anthropic-version` and
 * `anthropic-beta` when it sent them). Claude-format calls (/v1/messages) pass through natively (native.ts).
 */
import type { Endpoint, ProviderAdaptor, UpstreamRequest } from '../types.ts';
import { nativeBody, nativeStream, parseNativeResponse } from './native.ts';
import { ANTHROPIC_DEFAULT_BASE, ANTHROPIC_VERSION, buildClaudeBody } from './request.ts';
import { parseClaudeError, parseClaudeResponse } from './response.ts';
import { claudeStreamConversion } from './stream.ts';

export const ANTHROPIC_CHANNEL_TYPE = 14;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'messages']);

type Obj = Record<string, unknown>;

function base(baseUrl: string): string {
  return (baseUrl || ANTHROPIC_DEFAULT_BASE).replace(/\/+$/, '').replace(/\/v1$/, '');
}

function headers(key: string, clientHeaders: Headers, stream: boolean): Headers {
  const h = new Headers({
    'content-type': 'application/json',
    'x-api-key': key,
    'anthropic-version': clientHeaders.get('anthropic-version') ?? ANTHROPIC_VERSION,
  });
  const beta = clientHeaders.get('anthropic-beta');
  if (beta) h.set('anthropic-beta', beta);
  if (stream) h.set('accept', 'text/event-stream');
  return h;
}

export function createAnthropicAdaptor(now: () => number = Date.now): ProviderAdaptor {
  return {
    id: 'anthropic',
    channelTypes: [ANTHROPIC_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      return {
        url: `${base(channel.baseUrl)}/v1/messages`,
        method: 'POST',
        headers: headers(channel.key, input.clientHeaders, input.stream),
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

export const anthropicAdaptor: ProviderAdaptor = createAnthropicAdaptor();
