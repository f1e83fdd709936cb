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
  /** /v1/images/edits: a multipart form (image, image[], mask, prompt, ...) passed through. */
  | 'imageEdits'
  | 'speech'
  | 'transcriptions'
  | 'translations'
  | 'moderations'
  | 'rerank'
  | 'responses'
  /** Anthropic Messages (inbound Claude format: /v1/messages). */
  | 'messages'
  /** Gemini generateContent / streamGenerateContent (inbound Gemini format: /v1beta/models/{model}:...). */
  | 'generate'
  /**
   * Gemini embedContent (body `{content, ...}`) / batchEmbedContents (body `{requests: [...]}`), inbound Gemini
   * format; bridged to 'embeddings' on channels without it.
   */
  | 'embed';

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
  /**
   * The short-lived credential core obtained with the adaptor's `credential` exchange (Baidu access token, Vertex
   * OAuth token), cached per channel key until shortly before it expires. Absent for adaptors without one.
   */
  credential?: string;
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
  /**
   * 'ws': `url` is a ws(s):// URL; core opens a WebSocket, sends `body` (a string) as one text message, and reads
   * every message the upstream sends until it closes as the reply, each message followed by '\n' (so adaptors
   * parse newline-delimited JSON, for a whole reply and in a stream alike). Status 200 once the socket opened.
   */
  transport?: 'http' | 'ws';
};

/**
 * Thrown by `parseResponse` when a 2xx reply carries an error (Baidu's error_code, Hunyuan's Response.Error,
 * Spark's header.code): core handles it as an upstream error of that status (retry, auto-disable, the client's
 * envelope) instead of a success.
 */
export class UpstreamFailure extends Error {
  readonly error: UpstreamError;
  constructor(error: UpstreamError) {
    super(error.message);
    this.name = 'UpstreamFailure';
    this.error = error;
  }
}

/** A credential exchange result: the value handed to buildRequest as `channel.credential`, and its expiry. */
export type Credential = { value: string; expiresAtMs: number };

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
  /**
   * Whether a channel of `channelType` serves `endpoint` in its own format (passthrough); when false core bridges
   * the call to chat where a bridge exists (core/relay.ts BRIDGES). Absent = `supports(endpoint)` for every type.
   * For adaptors whose channel types differ, e.g. OpenAI-compatible upstreams without a Responses API.
   */
  supportsNative?(endpoint: Endpoint, channelType: number): boolean;
  /**
   * The upstream request. May be async for signing with WebCrypto-based libraries (SigV4, JWT), never for I/O:
   * core awaits it only when a Promise comes back.
   */
  buildRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest | Promise<UpstreamRequest>;
  /**
   * A credential the provider derives from the channel key over HTTP (Baidu's OAuth access token, Vertex's
   * service-account token). Core sends `request`, passes the reply to `parse`, caches the result per channel key
   * until a minute before it expires (one exchange at a time per key), drops it when the upstream answers 401,
   * and sets `channel.credential` for buildRequest, modelsRequest and balanceRequests.
   */
  credential?: {
    request(channel: ChannelConfig, nowMs: number): UpstreamRequest | Promise<UpstreamRequest>;
    /** The exchange reply (status checked by core: a non-2xx fails the call as an upstream error). */
    parse(res: { status: number; bodyText: string }, nowMs: number): Credential;
  };
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

/** An adaptor whose requests need no async signing (most): tests and callers get the request directly. */
export type SyncProviderAdaptor = Omit<ProviderAdaptor, 'buildRequest'> & {
  buildRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest;
};
