/**
 * The provider adaptor contract (ARCHITECTURE.md §2 providers/<id>/, §4 step 4). An adaptor is pure: it turns
 * a relay call into the upstream's HTTP request and the upstream's reply back into the inbound format (OpenAI
 * shapes here), extracting the normalised Usage. It never does I/O: core/ sends the request, times it, retries
 * and bills. Adding a provider = one folder with an adaptor, fixtures of its documented wire format and golden
 * tests, plus one line in providers/registry.ts.
 */
import type { Usage } from '../core/usage.ts';
import type { FrameTransformer } from './frames.ts';

/** OpenAI-format operations the relay serves. */
export type Endpoint =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'images'
  | 'speech'
  | 'transcriptions'
  | 'translations'
  | 'moderations'
  | 'rerank'
  | 'responses'
  /** Anthropic Messages (inbound Claude format: /v1/messages). */
  | 'messages'
  /** Gemini generateContent / streamGenerateContent (inbound Gemini format: /v1beta/models/{model}:...). */
  | 'generate';

/** The channel columns an adaptor may use (secrets included: adaptors run server-side only). */
export type ChannelConfig = {
  id: number;
  type: number;
  name: string;
  /** One key (the relay picks one when a channel holds several lines). */
  key: string;
  /** '' = the provider's default. No trailing slash. */
  baseUrl: string;
  /** Type-specific: Azure api-version, Vertex region, ... */
  other: string;
  openaiOrganization: string | null;
  /** Parsed `setting` JSON ({} when empty). */
  setting: Record<string, unknown>;
  /** Parsed param_override JSON merged into the top level of JSON bodies ({} when none). */
  paramOverride: Record<string, unknown>;
};

/**
 * Admin-editable model settings of seed 000 (the settings "models tab"), resolved by core from the options and
 * handed to adaptors, which stay pure. Keys are model names; "default" is the fallback entry where it applies.
 */
export type ProviderSettings = {
  claude: {
    /** claude.model_headers_settings: model → extra request headers (e.g. anthropic-beta). */
    modelHeaders: Record<string, Record<string, string>>;
    /** claude.default_max_tokens: model (or "default") → max_tokens when the client sets none. */
    defaultMaxTokens: Record<string, number>;
    /** claude.thinking_adapter_enabled: the `-thinking` model suffix turns extended thinking on. */
    thinkingAdapterEnabled: boolean;
    /** claude.thinking_adapter_budget_tokens_percentage (0.1–1): budget = max_tokens × this. */
    thinkingBudgetShare: number;
  };
  gemini: {
    /** gemini.safety_settings: category (or "default") → threshold, e.g. {"default":"OFF"}. */
    safetySettings: Record<string, string>;
    /** gemini.version_settings: model (or "default") → API version, e.g. {"default":"v1beta"}. */
    versionSettings: Record<string, string>;
  };
};

export const DEFAULT_PROVIDER_SETTINGS: ProviderSettings = {
  claude: {
    modelHeaders: {},
    defaultMaxTokens: { default: 8192 },
    thinkingAdapterEnabled: true,
    thinkingBudgetShare: 0.8,
  },
  gemini: { safetySettings: { default: 'OFF' }, versionSettings: { default: 'v1beta' } },
};

export type RelayInput = {
  endpoint: Endpoint;
  /** The model after model mapping: what the upstream gets. */
  upstreamModel: string;
  stream: boolean;
  /** Parsed JSON body (the client's, model already replaced) or FormData for multipart endpoints. */
  body: Record<string, unknown> | FormData;
  /** Client headers the adaptor may forward (e.g. anthropic-version later); never the client's credentials. */
  clientHeaders: Headers;
  /** Model settings from the options; absent = DEFAULT_PROVIDER_SETTINGS. */
  settings?: ProviderSettings;
};

export type UpstreamRequest = {
  url: string;
  method: 'GET' | 'POST';
  headers: Headers;
  body: BodyInit | null;
};

export type ParsedResponse = {
  /** What the client receives, in the inbound (OpenAI) format. */
  body: BodyInit;
  contentType: string;
  /** null when the upstream reported none (core counts locally). */
  usage: Usage | null;
  /** Generated text, for local counting when usage is missing. */
  completionText: string;
};

/** Live tally of a stream, read by core when the stream ends or the client goes away. */
export type StreamTally = {
  usage: Usage | null;
  /** Generated text so far (content + reasoning), for local counting when usage is missing. */
  completionText: string;
  /** True once the first content/reasoning/tool delta passed (core measures first-token time from it). */
  sawFirstToken: boolean;
};

export type StreamConversion = {
  /**
   * Upstream bytes in, client SSE bytes out (OpenAI `data: {...}\n\n` lines, ending with `data: [DONE]`), run
   * synchronously on each upstream chunk (frames.ts).
   */
  transformer: FrameTransformer;
  tally(): StreamTally;
};

/** An upstream error in a neutral shape; the inbound front renders it in its own envelope. */
export type UpstreamError = {
  status: number;
  message: string;
  /** e.g. `invalid_request_error`, `insufficient_quota`, `authentication_error` */
  type: string;
  code: string | null;
};

export interface ProviderAdaptor {
  readonly id: string;
  /** Channel type ids (seed 000 §3) this adaptor serves. */
  readonly channelTypes: readonly number[];
  supports(endpoint: Endpoint): boolean;
  buildRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest;
  parseResponse(
    input: RelayInput,
    res: { status: number; headers: Headers; body: Uint8Array },
  ): ParsedResponse;
  streamConversion(input: RelayInput): StreamConversion;
  parseError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError;
  /** Upstream model list (FetchUpstreamModels); absent when the provider has none. */
  modelsRequest?(channel: ChannelConfig): UpstreamRequest;
  parseModels?(body: unknown): string[];
  /** Upstream balance in USD (UpdateChannelBalance); absent or [] = "not supported for this channel type". */
  balanceRequests?(channel: ChannelConfig): UpstreamRequest[];
  parseBalance?(bodies: unknown[]): number;
}
