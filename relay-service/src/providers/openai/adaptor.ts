import { isObject } from '../json.ts';
import type { ChannelConfig, Endpoint, RelayInput, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { apiRoot, CUSTOM_CHANNEL, channelBase, OPENAI_COMPATIBLE, upstreamUrl } from './channels.ts';
import { buildOpenAIBody, jsonHeaders } from './request.ts';
import { parseOpenAIError, parseOpenAIResponse } from './response.ts';
import { openAIStreamConversion } from './stream.ts';

const ENDPOINTS: ReadonlySet<Endpoint> = new Set<Endpoint>([
  'chat',
  'completions',
  'embeddings',
  'images',
  'imageEdits',
  'speech',
  'transcriptions',
  'translations',
  'moderations',
  'rerank',
  'responses',
]);

const OPENAI = 1;
/**
 * The channel types whose upstream has the Responses API: OpenAI itself and Custom (a full URL, usually another
 * gateway). The other compatible types (DeepSeek, Moonshot, Mistral, ...) document chat only, so Responses calls
 * reach them through the chat bridge. Azure (3) has its own adaptor, which serves Responses natively.
 */
const RESPONSES_NATIVE: ReadonlySet<number> = new Set([OPENAI, CUSTOM_CHANNEL]);
const DEEPSEEK = 43;
const SILICONFLOW = 40;

function authHeaders(channel: ChannelConfig, headers = new Headers()): Headers {
  headers.set('Authorization', `Bearer ${channel.key}`);
  if (channel.openaiOrganization) headers.set('OpenAI-Organization', channel.openaiOrganization);
  return headers;
}

const get = (url: string, channel: ChannelConfig): UpstreamRequest => ({
  url,
  method: 'GET',
  headers: authHeaders(channel),
  body: null,
});

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/**
 * Balance from the bodies answered to balanceRequests, recognised by shape (parseBalance is not told the
 * channel type): OpenAI's legacy billing pair, DeepSeek's balance_infos, SiliconFlow's user info.
 */
export function parseOpenAIFamilyBalance(bodies: unknown[]): number {
  // balanceRequests answered [] (a type without balance API): core sent nothing and passes no bodies.
  if (bodies.length === 0) throw new Error('balance is not supported for this channel type');
  const [a, b] = bodies;
  if (bodies.length === 2 && isObject(a) && isObject(b)) {
    const hard = num(a.hard_limit_usd);
    const usedCents = num(b.total_usage);
    if (hard !== null && usedCents !== null) return hard - usedCents / 100;
  }
  if (isObject(a) && Array.isArray(a.balance_infos)) {
    const usd = a.balance_infos.find((i) => isObject(i) && i.currency === 'USD');
    const total = isObject(usd) ? num(usd.total_balance) : null;
    if (total === null) throw new Error('DeepSeek balance: no USD entry in balance_infos');
    return total;
  }
  if (isObject(a) && isObject(a.data)) {
    const total = num(a.data.totalBalance);
    if (total !== null) return total;
  }
  throw new Error('unrecognised balance response');
}

export type OpenAIAdaptorOptions = {
  id?: string;
  channelTypes?: readonly number[];
  /** Clock for the billing-usage date range (tests pin it). */
  now?: () => number;
};

/**
 * The OpenAI adaptor: OpenAI itself and every OpenAI-compatible channel type of OPENAI_COMPATIBLE. The family
 * speaks the inbound format already, so requests change little (model, param_override, stream_options,
 * reasoning-model parameters) and replies pass through while usage is read.
 */
export function createOpenAIAdaptor(opts: OpenAIAdaptorOptions = {}): SyncProviderAdaptor {
  const now = opts.now ?? Date.now;
  return {
    id: opts.id ?? 'openai',
    channelTypes: opts.channelTypes ?? Object.keys(OPENAI_COMPATIBLE).map(Number),
    supports: (endpoint) => ENDPOINTS.has(endpoint),
    supportsNative: (endpoint, channelType) =>
      endpoint === 'responses' ? RESPONSES_NATIVE.has(channelType) : ENDPOINTS.has(endpoint),

    buildRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
      const { body, contentType, model } = buildOpenAIBody(channel, input);
      return {
        url: upstreamUrl(channel, input.endpoint, model),
        method: 'POST',
        headers: authHeaders(channel, jsonHeaders(contentType, input.stream)),
        body,
      };
    },
    parseResponse: parseOpenAIResponse,
    streamConversion: openAIStreamConversion,
    parseError: parseOpenAIError,

    modelsRequest(channel) {
      // A custom channel's base is a full relay URL: its models live at the origin's /v1/models.
      if (channel.type === CUSTOM_CHANNEL)
        return get(`${new URL(channelBase(channel)).origin}/v1/models`, channel);
      return get(`${apiRoot(channel)}/models`, channel);
    },
    parseModels(body) {
      const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
      const ids = data.map((m) => (isObject(m) && typeof m.id === 'string' ? m.id : '')).filter(Boolean);
      return [...new Set(ids)];
    },

    /** An empty list: this channel type has no balance API. */
    balanceRequests(channel) {
      switch (channel.type) {
        case OPENAI: {
          const root = apiRoot(channel);
          const t = now();
          const range = `start_date=${isoDay(t - 100 * DAY_MS)}&end_date=${isoDay(t + DAY_MS)}`;
          return [
            get(`${root}/dashboard/billing/subscription`, channel),
            get(`${root}/dashboard/billing/usage?${range}`, channel),
          ];
        }
        case DEEPSEEK:
          // The balance API sits beside /v1, not below it.
          return [get(`${channelBase(channel).replace(/\/v1$/, '')}/user/balance`, channel)];
        case SILICONFLOW:
          return [get(`${apiRoot(channel)}/user/info`, channel)];
        default:
          return [];
      }
    },
    parseBalance: parseOpenAIFamilyBalance,
  };
}

export const openaiAdaptor: SyncProviderAdaptor = createOpenAIAdaptor();
