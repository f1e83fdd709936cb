/**
 * Cloudflare Workers AI (channel type 39) through its OpenAI-compatible endpoints
 * (https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/):
 * `{base}/client/v4/accounts/{account_id}/ai/v1/chat/completions`, `/ai/v1/embeddings` and `/ai/v1/responses`,
 * with the API token as a Bearer key. The account id is the channel's `other` field (new-api's convention).
 * Bodies, replies and streams are the OpenAI family's (providers/openai): usage is read where Workers AI reports
 * it and counted by core otherwise. Errors come in Cloudflare's API envelope
 * `{success:false, errors:[{code, message}], result:null}`, or OpenAI's shape, both read here.
 */
import { isObject, str } from '../json.ts';
import { ENDPOINT_PATHS } from '../openai/channels.ts';
import { buildOpenAIBody, jsonHeaders } from '../openai/request.ts';
import { parseOpenAIError, parseOpenAIResponse } from '../openai/response.ts';
import { openAIStreamConversion } from '../openai/stream.ts';
import type {
  ChannelConfig,
  Endpoint,
  SyncProviderAdaptor,
  UpstreamError,
  UpstreamRequest,
} from '../types.ts';

export const CLOUDFLARE_CHANNEL_TYPE = 39;
export const CLOUDFLARE_DEFAULT_BASE = 'https://api.cloudflare.com';
const SUPPORTED: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'embeddings', 'responses']);

/**
 * The account id from `other`. A channel without one (or with something that is not an id) cannot be served:
 * that is the administrator's configuration to fix, reported as such instead of as an unreachable upstream.
 */
export function accountId(channel: ChannelConfig): string {
  const id = channel.other.trim();
  if (!/^[A-Za-z0-9_-]+$/.test(id))
    // Core reports a throw from buildRequest as 500 channel_config_invalid with this message.
    throw new Error('a Cloudflare channel needs its account id in the "other" field');
  return id;
}

/** `{base}/client/v4/accounts/{id}/ai/v1`; a base that already ends in /client/v4 is accepted. */
export function cloudflareRoot(channel: ChannelConfig): string {
  const base = (channel.baseUrl || CLOUDFLARE_DEFAULT_BASE).replace(/\/+$/, '').replace(/\/client\/v4$/, '');
  return `${base}/client/v4/accounts/${accountId(channel)}/ai/v1`;
}

/** Cloudflare's API envelope first, then the OpenAI family's shapes (the compatible endpoints use both). */
export function parseCloudflareError(res: {
  status: number;
  headers: Headers;
  bodyText: string;
}): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  if (isObject(json) && Array.isArray(json.errors) && json.errors.length > 0) {
    const errors = json.errors.filter(isObject);
    const message = errors
      .map((e) => str(e.message))
      .filter(Boolean)
      .join('; ');
    const code = errors[0]?.code;
    if (message)
      return {
        status: res.status,
        message,
        type: res.status === 401 || res.status === 403 ? 'authentication_error' : 'upstream_error',
        code: typeof code === 'number' || typeof code === 'string' ? String(code) : null,
      };
  }
  return parseOpenAIError(res);
}

export const cloudflareAdaptor: SyncProviderAdaptor = {
  id: 'cloudflare',
  channelTypes: [CLOUDFLARE_CHANNEL_TYPE],
  supports: (endpoint) => SUPPORTED.has(endpoint),
  buildRequest(channel, input): UpstreamRequest {
    const url = cloudflareRoot(channel) + ENDPOINT_PATHS[input.endpoint];
    const { body, contentType } = buildOpenAIBody(channel, input);
    const headers = jsonHeaders(contentType, input.stream);
    headers.set('Authorization', `Bearer ${channel.key}`);
    return { url, method: 'POST', headers, body };
  },
  parseResponse: parseOpenAIResponse,
  streamConversion: openAIStreamConversion,
  parseError: parseCloudflareError,
};
