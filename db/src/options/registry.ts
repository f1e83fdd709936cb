/**
 * Every runtime option of seed 000 §3 "Option", with new-api's key names, value type, default, secrecy and
 * bounds. Values are stored as strings in the `options` table; booleans as 'true' / 'false'.
 */

export type OptionType = 'string' | 'boolean' | 'int' | 'float' | 'json';

export type OptionDef<T = unknown> = {
  readonly type: OptionType;
  /** Default as stored (string form). */
  readonly default: string;
  /** Never returned to the console unless asked for; redacted in audit entries. */
  readonly secret: boolean;
  /**
   * Only root (role 100) may change it: it decides where a secret, a link or money goes (mail, server address,
   * worker, OAuth and bot-check keys, payment keys and URLs, the exchange rate; ADR 033). Administrators see it.
   */
  readonly rootOnly?: boolean;
  readonly min?: number;
  readonly max?: number;
  /** Allowed values of a string option. */
  readonly values?: readonly string[];
  /** Extra check of the parsed value; returns an error message or null. */
  readonly validate?: (value: T) => string | null;
  /** Phantom: the parsed value type. */
  readonly __value?: T;
};

type DefOpts<T> = Partial<Pick<OptionDef<T>, 'secret' | 'min' | 'max' | 'validate'>>;

const str = (def = '', opts: DefOpts<string> & { values?: readonly string[] } = {}): OptionDef<string> => ({
  type: 'string',
  default: def,
  secret: false,
  ...opts,
});
const secret = (): OptionDef<string> => ({ type: 'string', default: '', secret: true });
const bool = (def: boolean): OptionDef<boolean> => ({ type: 'boolean', default: String(def), secret: false });
const int = (def: number, opts: DefOpts<number> = {}): OptionDef<number> => ({
  type: 'int',
  default: String(def),
  secret: false,
  ...opts,
});
const float = (def: number, opts: DefOpts<number> = {}): OptionDef<number> => ({
  type: 'float',
  default: String(def),
  secret: false,
  ...opts,
});
const json = <T>(def: string, validate?: (value: T) => string | null): OptionDef<T> => ({
  type: 'json',
  default: def,
  secret: false,
  ...(validate ? { validate } : {}),
});

/** Marks an option root-only to change (ADR 033): it decides where a secret, a link or money goes. */
const root = <D extends { readonly type: OptionType }>(def: D): D & { readonly rootOnly: true } => ({
  ...def,
  rootOnly: true,
});

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const numberMap = (v: Record<string, number>) => {
  if (!isRecord(v)) return 'must be a JSON object';
  for (const [k, n] of Object.entries(v)) {
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return `value of "${k}" must be a number >= 0`;
  }
  return null;
};
const stringMap = (v: Record<string, string>) => {
  if (!isRecord(v)) return 'must be a JSON object';
  for (const [k, s] of Object.entries(v))
    if (typeof s !== 'string') return `value of "${k}" must be a string`;
  return null;
};

/** Gemini's HarmBlockThreshold values (gemini.safety_settings). */
export const GEMINI_SAFETY_THRESHOLDS = [
  'OFF',
  'BLOCK_NONE',
  'BLOCK_ONLY_HIGH',
  'BLOCK_MEDIUM_AND_ABOVE',
  'BLOCK_LOW_AND_ABOVE',
  'HARM_BLOCK_THRESHOLD_UNSPECIFIED',
] as const;
export const GEMINI_API_VERSIONS = ['v1', 'v1beta', 'v1alpha'] as const;

const oneOfMap = (allowed: readonly string[]) => (v: Record<string, string>) => {
  if (!isRecord(v)) return 'must be a JSON object';
  for (const [k, s] of Object.entries(v))
    if (typeof s !== 'string' || !allowed.includes(s))
      return `value of "${k}" must be one of ${allowed.join(', ')}`;
  return null;
};
const positiveIntMap = (v: Record<string, number>) => {
  if (!isRecord(v)) return 'must be a JSON object';
  for (const [k, n] of Object.entries(v))
    if (!Number.isSafeInteger(n) || n <= 0) return `value of "${k}" must be a positive integer`;
  return null;
};
/** model → {header: value}; a value may also be a list of strings, as new-api stores it. */
const headerMap = (v: Record<string, unknown>) => {
  if (!isRecord(v)) return 'must be a JSON object';
  for (const [model, headers] of Object.entries(v)) {
    if (!isRecord(headers)) return `value of "${model}" must be an object of header names to strings`;
    for (const [name, value] of Object.entries(headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return `"${name}" of "${model}" is not a header name`;
      const ok =
        typeof value === 'string' || (Array.isArray(value) && value.every((x) => typeof x === 'string'));
      if (!ok) return `header "${name}" of "${model}" must be a string`;
    }
  }
  return null;
};
const amountList = (v: number[]) =>
  Array.isArray(v) && v.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)
    ? null
    : 'must be a JSON array of amounts >= 0';
const objectList = (v: Record<string, unknown>[]) =>
  Array.isArray(v) && v.every(isRecord) ? null : 'must be a JSON array of objects';

export type ApiAddress = { title: string; url: string; line: string };
const apiAddresses = (v: ApiAddress[]) =>
  Array.isArray(v) && v.every((a) => isRecord(a) && typeof a.url === 'string')
    ? null
    : 'must be a JSON array of {title, url, line}';

/** new-api's default list of upstream errors that disable a channel automatically. */
export const DEFAULT_AUTOMATIC_DISABLE_KEYWORDS = [
  'Your credit balance is too low',
  'This organization has been disabled.',
  'You exceeded your current quota',
  'Permission denied',
  'The security token included in the request is invalid',
  'Operation not allowed',
  'Your account is not authorized',
].join('\n');

/** new-api's default chat-client links ({key} and {address} are filled in). */
export const DEFAULT_CHATS = JSON.stringify([
  { 'ChatGPT Next Web 官方示例': 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
  {
    'Lobe Chat 官方示例':
      'https://chat-preview.lobehub.com/?settings={"keyVaults":{"openai":{"apiKey":"{key}","baseURL":"{address}/v1"}}}',
  },
  {
    'AI as Workspace':
      'https://aiaw.app/set-provider?provider={"type":"openai","settings":{"apiKey":"{key}","baseURL":"{address}/v1","compatibility":"strict"}}',
  },
  { 'AMA 问天': 'ama://set-api-key?server={address}&key={key}' },
  { OpenCat: 'opencat://team/join?domain={address}&token={key}' },
]);

/** A starter price list (ratio 1 = $0.002 / 1K tokens, as in new-api); admins extend it. */
export const DEFAULT_MODEL_RATIO = JSON.stringify({
  'gpt-3.5-turbo': 0.25,
  'gpt-4': 15,
  'gpt-4-turbo': 5,
  'gpt-4o': 1.25,
  'gpt-4o-mini': 0.075,
  'gpt-4.1': 1,
  'gpt-4.1-mini': 0.2,
  'gpt-4o-audio-preview': 1.25,
  'gpt-4o-realtime-preview': 2.5,
  // gpt-image-1: text input $5/M; its image input and output in ImageRatio and CompletionRatio.
  'gpt-image-1': 2.5,
  o1: 7.5,
  'o3-mini': 0.55,
  'text-embedding-3-small': 0.01,
  'text-embedding-3-large': 0.065,
  'claude-3-haiku-20240307': 0.125,
  'claude-3-5-haiku-20241022': 0.5,
  'claude-3-5-sonnet-20241022': 1.5,
  'claude-3-7-sonnet-20250219': 1.5,
  'claude-sonnet-4-20250514': 1.5,
  'claude-opus-4-20250514': 7.5,
  'gemini-1.5-flash': 0.0375,
  'gemini-1.5-pro': 0.625,
  'gemini-2.0-flash': 0.05,
  'gemini-2.5-pro': 0.625,
  'deepseek-chat': 0.135,
  'deepseek-reasoner': 0.275,
});
export const DEFAULT_COMPLETION_RATIO = JSON.stringify({
  'gpt-3.5-turbo': 3,
  'gpt-4': 2,
  'gpt-4-turbo': 3,
  'gpt-4o': 4,
  'gpt-4o-mini': 4,
  'gpt-4.1': 4,
  'gpt-4.1-mini': 4,
  'gpt-4o-audio-preview': 4,
  'gpt-4o-realtime-preview': 4,
  // gpt-image-1: output (image) tokens $40/M vs text input $5/M.
  'gpt-image-1': 8,
  o1: 4,
  'o3-mini': 4,
  'claude-3-haiku-20240307': 5,
  'claude-3-5-haiku-20241022': 5,
  'claude-3-5-sonnet-20241022': 5,
  'claude-3-7-sonnet-20250219': 5,
  'claude-sonnet-4-20250514': 5,
  'claude-opus-4-20250514': 5,
  'gemini-1.5-flash': 4,
  'gemini-1.5-pro': 4,
  'gemini-2.0-flash': 4,
  'gemini-2.5-pro': 8,
  'deepseek-chat': 4,
  'deepseek-reasoner': 4,
});
/** Fixed per-call prices in USD (new-api defaults for drawing and music tasks). */
export const DEFAULT_MODEL_PRICE = JSON.stringify({
  mj_imagine: 0.1,
  mj_variation: 0.1,
  mj_reroll: 0.1,
  mj_blend: 0.1,
  mj_modal: 0.1,
  mj_zoom: 0.1,
  mj_shorten: 0.1,
  mj_high_variation: 0.1,
  mj_low_variation: 0.1,
  mj_pan: 0.1,
  mj_inpaint: 0,
  mj_custom_zoom: 0,
  mj_describe: 0.05,
  mj_upscale: 0.05,
  swap_face: 0.05,
  mj_upload: 0.05,
  suno_music: 0.1,
  suno_lyrics: 0.01,
  'dall-e-3': 0.04,
});

/**
 * Cached-read input price ÷ normal input price (new-api's CacheRatio). Models not listed pay full price for
 * cached tokens (ratio 1).
 */
export const DEFAULT_CACHE_RATIO = JSON.stringify({
  'gpt-4o': 0.5,
  'gpt-4o-mini': 0.5,
  'gpt-4.1': 0.5,
  'gpt-4.1-mini': 0.5,
  o1: 0.5,
  'o3-mini': 0.5,
  'claude-3-haiku-20240307': 0.1,
  'claude-3-5-haiku-20241022': 0.1,
  'claude-3-5-sonnet-20241022': 0.1,
  'claude-3-7-sonnet-20250219': 0.1,
  'claude-sonnet-4-20250514': 0.1,
  'claude-opus-4-20250514': 0.1,
  'gemini-1.5-flash': 0.25,
  'gemini-1.5-pro': 0.25,
  'gemini-2.0-flash': 0.25,
  'gemini-2.5-pro': 0.25,
  'deepseek-chat': 0.1,
  'deepseek-reasoner': 0.1,
});
/** Cache-write input price ÷ normal input price (Claude's 5-minute cache write costs 1.25×). */
export const DEFAULT_CREATE_CACHE_RATIO = JSON.stringify({
  'claude-3-haiku-20240307': 1.25,
  'claude-3-5-haiku-20241022': 1.25,
  'claude-3-5-sonnet-20241022': 1.25,
  'claude-3-7-sonnet-20250219': 1.25,
  'claude-sonnet-4-20250514': 1.25,
  'claude-opus-4-20250514': 1.25,
});
/**
 * Audio input price ÷ text input price. gpt-4o-audio-preview: $40/M audio vs $2.5/M text = 16 (the
 * 2024-10-01 snapshot charged $100/M = 40); gpt-4o-realtime-preview: $40/M vs $5/M = 8 ($100/M = 20 for
 * 2024-10-01).
 */
export const DEFAULT_AUDIO_RATIO = JSON.stringify({
  'gpt-4o-audio-preview': 16,
  'gpt-4o-audio-preview-2024-10-01': 40,
  'gpt-4o-realtime-preview': 8,
  'gpt-4o-realtime-preview-2024-10-01': 20,
});
/** Audio output price ÷ audio input price ($80/M vs $40/M, and $200/M vs $100/M for 2024-10-01). */
export const DEFAULT_AUDIO_COMPLETION_RATIO = JSON.stringify({
  'gpt-4o-audio-preview': 2,
  'gpt-4o-realtime-preview': 2,
});

/**
 * Image input price ÷ text input price (new-api's ImageRatio): the image tokens a model reports in its usage
 * (`input_tokens_details.image_tokens`, `prompt_tokens_details.image_tokens`) are billed at ModelRatio × this.
 * gpt-image-1: $10/M image input vs $5/M text input = 2. Models not listed: 1 (image input priced as text).
 */
export const DEFAULT_IMAGE_RATIO = JSON.stringify({ 'gpt-image-1': 2 });

export const OPTIONS = {
  // Login / registration
  PasswordLoginEnabled: bool(true),
  PasswordRegisterEnabled: bool(true),
  EmailVerificationEnabled: bool(false),
  RegisterEnabled: bool(true),
  GitHubOAuthEnabled: bool(false),
  LinuxDOOAuthEnabled: bool(false),
  WeChatAuthEnabled: bool(false),
  TelegramOAuthEnabled: bool(false),
  TurnstileCheckEnabled: bool(false),
  EmailDomainRestrictionEnabled: bool(false),
  EmailAliasRestrictionEnabled: bool(false),
  EmailDomainWhitelist: str(
    'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
  ),

  // Mail
  SMTPServer: root(str()),
  SMTPPort: root(int(587, { min: 1, max: 65535 })),
  SMTPAccount: root(str()),
  SMTPFrom: root(str()),
  SMTPToken: root(secret()),
  SMTPSSLEnabled: root(bool(false)),

  // Server
  ServerAddress: root(str('http://localhost:3000')),
  WorkerUrl: root(str()),
  WorkerValidKey: root(secret()),

  // OAuth and bot check
  GitHubClientId: root(str()),
  GitHubClientSecret: root(secret()),
  LinuxDOClientId: root(str()),
  LinuxDOClientSecret: root(secret()),
  WeChatServerAddress: root(str()),
  WeChatServerToken: root(secret()),
  WeChatAccountQRCodeImageURL: root(str()),
  TelegramBotToken: root(secret()),
  TelegramBotName: root(str()),
  TurnstileSiteKey: root(str()),
  TurnstileSecretKey: root(secret()),

  // Branding
  Notice: str(),
  SystemName: str('Switchyard'),
  Logo: str(),
  Footer: str(),
  About: str(),
  HomePageContent: str(),
  apiAddressList: root(json<ApiAddress[]>('[]', apiAddresses)),

  // Payment
  Price: root(float(7.3, { min: 0 })),
  MinTopUp: int(1, { min: 1 }),
  ProductConfig: json<number[]>('[]', amountList),
  TopupConfig: json<number[]>('[]', amountList),
  AlipayPrivateKey: root(secret()),
  AlipayPublicKey: root(secret()),
  AlipayAppId: root(str()),
  AlipayNotifyUrl: root(str()),
  WeChatPayAppId: root(str()),
  WeChatPayMchId: root(str()),
  WeChatPayCertSerial: root(str()),
  WeChatPayApiV3Key: root(secret()),
  WeChatPayNotifyUrl: root(str()),
  WeChatPayApiCertKey: root(secret()),
  /** WeChat Pay's platform public key (PEM) and its id: verify answers and notifies (ADR 027) */
  WeChatPayPublicKey: root(str()),
  WeChatPayPublicKeyId: root(str()),

  // Display and links
  TopUpLink: root(str()),
  ChatLink: root(str()),
  ChatLink2: root(str()),
  QuotaPerUnit: root(float(500000, { min: 1 })),
  DisplayInCurrencyEnabled: bool(true),
  DisplayTokenStatEnabled: bool(true),
  DefaultCollapseSidebar: bool(false),
  DemoSiteEnabled: bool(false),
  SelfUseModeEnabled: bool(false),

  // Drawing and async tasks
  DrawingEnabled: bool(true),
  TaskEnabled: bool(true),
  MjNotifyEnabled: bool(false),
  MjAccountFilterEnabled: bool(false),
  MjForwardUrlEnabled: bool(true),
  MjModeClearEnabled: bool(true),
  MjActionCheckSuccessEnabled: bool(true),

  // Sensitive content
  CheckSensitiveEnabled: bool(true),
  CheckSensitiveOnPromptEnabled: bool(true),
  CheckSensitiveOnCompletionEnabled: bool(false),
  StopOnSensitiveEnabled: bool(true),
  SensitiveWords: str('test_sensitive'),

  // Logs and data export
  LogConsumeEnabled: bool(true),
  DataExportEnabled: bool(true),
  DataExportInterval: int(5, { min: 1 }),
  DataExportDefaultTime: str('hour', { values: ['hour', 'day', 'week'] }),

  // Channels and quota
  RetryTimes: int(0, { min: 0, max: 10 }),
  ChannelDisableThreshold: float(5, { min: 0 }),
  QuotaRemindThreshold: int(1000, { min: 0 }),
  AutomaticDisableChannelEnabled: bool(false),
  AutomaticEnableChannelEnabled: bool(false),
  AutomaticDisableKeywords: str(DEFAULT_AUTOMATIC_DISABLE_KEYWORDS),
  QuotaForNewUser: int(0, { min: 0 }),
  PreConsumedQuota: int(500, { min: 0 }),
  QuotaForInviter: int(0, { min: 0 }),
  QuotaForInvitee: int(0, { min: 0 }),
  StreamCacheQueueLength: int(0, { min: 0 }),

  // JSON maps and lists
  GroupRatio: json<Record<string, number>>('{"default":1,"vip":1,"svip":1}', numberMap),
  UserUsableGroups: json<Record<string, string>>('{"default":"默认分组","vip":"vip分组"}', stringMap),
  ModelPrice: json<Record<string, number>>(DEFAULT_MODEL_PRICE, numberMap),
  ModelRatio: json<Record<string, number>>(DEFAULT_MODEL_RATIO, numberMap),
  CompletionRatio: json<Record<string, number>>(DEFAULT_COMPLETION_RATIO, numberMap),
  CacheRatio: json<Record<string, number>>(DEFAULT_CACHE_RATIO, numberMap),
  CreateCacheRatio: json<Record<string, number>>(DEFAULT_CREATE_CACHE_RATIO, numberMap),
  AudioRatio: json<Record<string, number>>(DEFAULT_AUDIO_RATIO, numberMap),
  AudioCompletionRatio: json<Record<string, number>>(DEFAULT_AUDIO_COMPLETION_RATIO, numberMap),
  ImageRatio: json<Record<string, number>>(DEFAULT_IMAGE_RATIO, numberMap),
  Chats: root(json<Record<string, string>[]>(DEFAULT_CHATS, objectList)),

  // Model request rate limit
  ModelRequestRateLimitEnabled: bool(false),
  ModelRequestRateLimitCount: int(0, { min: 0 }),
  ModelRequestRateLimitSuccessCount: int(1000, { min: 1 }),
  ModelRequestRateLimitDurationMinutes: int(1, { min: 0 }),

  // Model settings
  'gemini.safety_settings': json<Record<string, string>>(
    '{"default":"OFF"}',
    oneOfMap(GEMINI_SAFETY_THRESHOLDS),
  ),
  'gemini.version_settings': json<Record<string, string>>(
    '{"default":"v1beta"}',
    oneOfMap(GEMINI_API_VERSIONS),
  ),
  'claude.model_headers_settings': json<Record<string, unknown>>('{}', headerMap),
  'claude.default_max_tokens': json<Record<string, number>>('{"default":8192}', positiveIntMap),
  'claude.thinking_adapter_enabled': bool(true),
  'claude.thinking_adapter_budget_tokens_percentage': float(0.8, { min: 0.1, max: 1 }),
} as const satisfies Record<string, Pick<OptionDef, 'type' | 'default' | 'secret'>>;

export type OptionKey = keyof typeof OPTIONS;
export type OptionValue<K extends OptionKey> = (typeof OPTIONS)[K] extends OptionDef<infer T> ? T : never;
export type OptionValues = { [K in OptionKey]: OptionValue<K> };

export const OPTION_KEYS = Object.keys(OPTIONS) as OptionKey[];

export function isOptionKey(key: string): key is OptionKey {
  return Object.hasOwn(OPTIONS, key);
}

export function optionDef<K extends OptionKey>(key: K): OptionDef<OptionValue<K>> {
  return OPTIONS[key] as unknown as OptionDef<OptionValue<K>>;
}

export function isSecretOption(key: string): boolean {
  return isOptionKey(key) && OPTIONS[key].secret;
}

/** Whether only root may change the option (ADR 033). */
export function isRootOnlyOption(key: string): boolean {
  return isOptionKey(key) && (OPTIONS[key] as OptionDef).rootOnly === true;
}

/** The root-only keys, in the registry's order. */
export const ROOT_ONLY_OPTION_KEYS: readonly OptionKey[] = OPTION_KEYS.filter(isRootOnlyOption);

export class OptionValidationError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'OptionValidationError';
    this.key = key;
  }
}

function checkBounds(key: string, def: { min?: number; max?: number }, n: number): void {
  if (def.min !== undefined && n < def.min)
    throw new OptionValidationError(key, `must be at least ${def.min}`);
  if (def.max !== undefined && n > def.max)
    throw new OptionValidationError(key, `must be at most ${def.max}`);
}

/** Parses the stored string form, with validation. Throws OptionValidationError. */
export function parseOptionValue<K extends OptionKey>(key: K, raw: string): OptionValue<K> {
  if (!isOptionKey(key)) throw new OptionValidationError(key, 'unknown option');
  if (typeof raw !== 'string') throw new OptionValidationError(key, 'value must be a string');
  const def = optionDef(key) as OptionDef<unknown>;
  let value: unknown;
  switch (def.type) {
    case 'string':
      if (def.values && !def.values.includes(raw)) {
        throw new OptionValidationError(key, `must be one of ${def.values.join(', ')}`);
      }
      value = raw;
      break;
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw new OptionValidationError(key, "must be 'true' or 'false'");
      value = raw === 'true';
      break;
    case 'int': {
      const t = raw.trim();
      if (!/^-?\d+$/.test(t)) throw new OptionValidationError(key, 'must be an integer');
      const n = Number(t);
      if (!Number.isSafeInteger(n)) throw new OptionValidationError(key, 'is out of range');
      checkBounds(key, def, n);
      value = n;
      break;
    }
    case 'float': {
      const t = raw.trim();
      const n = t === '' ? Number.NaN : Number(t);
      if (!Number.isFinite(n)) throw new OptionValidationError(key, 'must be a number');
      checkBounds(key, def, n);
      value = n;
      break;
    }
    case 'json':
      try {
        value = JSON.parse(raw);
      } catch {
        throw new OptionValidationError(key, 'not a valid JSON string');
      }
      break;
  }
  const problem = def.validate?.(value);
  if (problem) throw new OptionValidationError(key, problem);
  return value as OptionValue<K>;
}

/** The stored string form of a typed value (validated). */
export function serializeOptionValue<K extends OptionKey>(key: K, value: OptionValue<K>): string {
  if (!isOptionKey(key)) throw new OptionValidationError(key, 'unknown option');
  const def = optionDef(key) as OptionDef<unknown>;
  let raw: string;
  switch (def.type) {
    case 'string':
      if (typeof value !== 'string') throw new OptionValidationError(key, 'must be a string');
      raw = value;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') throw new OptionValidationError(key, 'must be a boolean');
      raw = value ? 'true' : 'false';
      break;
    case 'int':
    case 'float':
      if (typeof value !== 'number') throw new OptionValidationError(key, 'must be a number');
      raw = String(value);
      break;
    case 'json':
      raw = JSON.stringify(value);
      break;
  }
  parseOptionValue(key, raw);
  return raw;
}

/**
 * Accepts what an admin form or the JSON contract sends (a string, or a typed value) and returns the
 * canonical stored string plus the parsed value. JSON text is kept as typed; booleans and numbers are
 * normalized.
 */
export function normalizeOptionInput<K extends OptionKey>(
  key: K,
  input: unknown,
): { raw: string; value: OptionValue<K> } {
  if (!isOptionKey(key)) throw new OptionValidationError(key, 'unknown option');
  const def = optionDef(key) as OptionDef<unknown>;
  if (typeof input === 'string') {
    const value = parseOptionValue(key, def.type === 'int' || def.type === 'float' ? input.trim() : input);
    const raw = def.type === 'json' || def.type === 'string' ? input : serializeOptionValue(key, value);
    return { raw, value };
  }
  if ((def.type === 'int' || def.type === 'float') && typeof input === 'number') {
    const raw = serializeOptionValue(key, input as OptionValue<K>);
    return { raw, value: parseOptionValue(key, raw) };
  }
  const raw = serializeOptionValue(key, input as OptionValue<K>);
  return { raw, value: parseOptionValue(key, raw) };
}

/** Every option at its default (parsed). */
export function defaultOptionValues(): OptionValues {
  const out = {} as Record<string, unknown>;
  for (const key of OPTION_KEYS) out[key] = parseOptionValue(key, OPTIONS[key].default);
  return out as OptionValues;
}
