/**
 * Prices and quota (gateway-behaviour §3). Pure functions over the option tables; quota is always an integer.
 *
 * Arithmetic is exact: every ratio is read as the decimal it was written as (its shortest round-trip form,
 * like new-api's decimal.NewFromFloat), the sum is computed in scaled BigInts and rounded once at the end, so
 * 0.075 × 20 is 1.5 (→ 2), not 1.4999999999999998 (→ 1).
 */
import type { OptionKey, OptionValue } from '@switchyard/db/options/registry.ts';
import type { Usage } from './usage.ts';

export type PriceTables = {
  modelRatio: Record<string, number>;
  completionRatio: Record<string, number>;
  /** Fixed USD per call. */
  modelPrice: Record<string, number>;
  groupRatio: Record<string, number>;
  cacheRatio: Record<string, number>;
  createCacheRatio: Record<string, number>;
  audioRatio: Record<string, number>;
  audioCompletionRatio: Record<string, number>;
  /** Image input price ÷ text input price (new-api's ImageRatio). */
  imageRatio: Record<string, number>;
  /** Quota per USD (500000). */
  quotaPerUnit: number;
  /** Token count held for the completion when a request gives no max_tokens. */
  preConsumedQuota: number;
  /** SelfUseModeEnabled: unpriced models are free instead of refused. */
  selfUseMode: boolean;
};

/** What priceTablesFrom reads: OptionService satisfies it (`get` is typed by the registry). */
export type OptionReader = { get<K extends OptionKey>(key: K): OptionValue<K> };

export function priceTablesFrom(options: OptionReader): PriceTables {
  return {
    modelRatio: options.get('ModelRatio'),
    completionRatio: options.get('CompletionRatio'),
    modelPrice: options.get('ModelPrice'),
    groupRatio: options.get('GroupRatio'),
    cacheRatio: options.get('CacheRatio'),
    createCacheRatio: options.get('CreateCacheRatio'),
    audioRatio: options.get('AudioRatio'),
    audioCompletionRatio: options.get('AudioCompletionRatio'),
    imageRatio: options.get('ImageRatio'),
    quotaPerUnit: options.get('QuotaPerUnit'),
    preConsumedQuota: options.get('PreConsumedQuota'),
    selfUseMode: options.get('SelfUseModeEnabled'),
  };
}

export type FixedPrice = {
  kind: 'fixed';
  /** The table key that matched (the model itself, or its undated base name). */
  pricedAs: string;
  /** USD per call. */
  modelPrice: number;
  groupRatio: number;
};

export type RatioPrice = {
  kind: 'ratio';
  /** The ModelRatio key that matched; '' for an unpriced model in self-use mode. */
  pricedAs: string;
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
  cacheRatio: number;
  cacheWriteRatio: number;
  audioRatio: number;
  audioCompletionRatio: number;
  /** Image input tokens (gpt-image-1's `input_tokens_details.image_tokens`) ÷ text input price. */
  imageRatio: number;
  /** Set when the model has no price and self-use mode made it free. */
  unpriced?: true;
};

export type Price = FixedPrice | RatioPrice;

/** A caller bug (the relay refuses unknown groups before pricing), not a client error. */
export class PricingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PricingError';
  }
}

/**
 * The base name of a dated model snapshot, or null: `gpt-4o-2024-08-06` → `gpt-4o`,
 * `claude-3-5-sonnet-20241022` → `claude-3-5-sonnet`, `gpt-4-0613` → `gpt-4` (OpenAI's older MMDD suffix).
 * Only one trailing date is removed; nothing else is guessed.
 */
export function undatedModelName(model: string): string | null {
  const m = /^(.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/.exec(model);
  return m?.[1] ?? null;
}

/** An own numeric entry (never an inherited property such as "toString"). */
function entry(table: Record<string, number>, key: string): number | undefined {
  const v = Object.hasOwn(table, key) ? table[key] : undefined;
  return typeof v === 'number' ? v : undefined;
}

/** Exact name first, then the undated base name. */
function lookup(table: Record<string, number>, model: string): number | undefined {
  const base = undatedModelName(model);
  return entry(table, model) ?? (base === null ? undefined : entry(table, base));
}

/**
 * The price of `model` for `group`. An exact entry beats a dated-snapshot fallback; at equal specificity a fixed
 * ModelPrice wins over ModelRatio. Returns null for an unpriced model ("ratio or price not set") unless the site
 * runs in self-use mode, where unpriced models cost nothing (ratio 0). Throws PricingError for a group missing
 * from GroupRatio.
 */
export function resolvePrice(tables: PriceTables, model: string, group: string): Price | null {
  const groupRatio = entry(tables.groupRatio, group);
  if (groupRatio === undefined) throw new PricingError(`group "${group}" has no GroupRatio`);
  const base = undatedModelName(model);
  const candidates = base === null ? [model] : [model, base];
  for (const name of candidates) {
    const modelPrice = entry(tables.modelPrice, name);
    if (modelPrice !== undefined) return { kind: 'fixed', pricedAs: name, modelPrice, groupRatio };
    const modelRatio = entry(tables.modelRatio, name);
    if (modelRatio !== undefined) return ratioPrice(tables, model, name, modelRatio, groupRatio);
  }
  if (!tables.selfUseMode) return null;
  return { ...ratioPrice(tables, model, '', 0, groupRatio), unpriced: true };
}

function ratioPrice(
  tables: PriceTables,
  model: string,
  pricedAs: string,
  modelRatio: number,
  groupRatio: number,
): RatioPrice {
  const completionRatio = lookup(tables.completionRatio, model) ?? 1;
  return {
    kind: 'ratio',
    pricedAs,
    modelRatio,
    completionRatio,
    groupRatio,
    // Unset ratios price the tokens like plain text: no cache discount, no write surcharge, audio in at the
    // input price and audio out at the completion price.
    cacheRatio: lookup(tables.cacheRatio, model) ?? 1,
    cacheWriteRatio: lookup(tables.createCacheRatio, model) ?? 1,
    audioRatio: lookup(tables.audioRatio, model) ?? 1,
    audioCompletionRatio: lookup(tables.audioCompletionRatio, model) ?? completionRatio,
    // An unset image ratio prices image input like text input (new-api's default of 1).
    imageRatio: lookup(tables.imageRatio, model) ?? 1,
  };
}

// ---- exact decimal arithmetic -------------------------------------------------------------------------------

/** n / 10^s */
type Dec = { n: bigint; s: number };

const pow10 = (s: number): bigint => 10n ** BigInt(s);

/** Recent dec() results: ratios and prices repeat on every call, and parsing them is a regex plus BigInt. */
const decCache = new Map<number, Dec>();
const DEC_CACHE_MAX = 4096;

/** The decimal a JS number was written as (its shortest round-trip string). Dec values are never mutated. */
function dec(x: number): Dec {
  let d = decCache.get(x);
  if (d === undefined) {
    d = parseDec(x);
    // Token counts vary without bound; start over rather than grow.
    if (decCache.size >= DEC_CACHE_MAX) decCache.clear();
    decCache.set(x, d);
  }
  return d;
}

function parseDec(x: number): Dec {
  if (!Number.isFinite(x)) throw new PricingError(`not a finite number: ${x}`);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new PricingError(`cannot read number ${x}`);
  const frac = m[3] ?? '';
  let n = BigInt(m[2] + frac);
  let s = frac.length - Number(m[4] ?? 0);
  if (s < 0) {
    n *= pow10(-s);
    s = 0;
  }
  return { n: m[1] ? -n : n, s };
}

const mul = (...xs: Dec[]): Dec => xs.reduce((a, b) => ({ n: a.n * b.n, s: a.s + b.s }), { n: 1n, s: 0 });

function add(...xs: Dec[]): Dec {
  const s = Math.max(0, ...xs.map((x) => x.s));
  return { n: xs.reduce((acc, x) => acc + x.n * pow10(s - x.s), 0n), s };
}

/** Round half away from zero (decimal.Round(0)). */
function round(x: Dec): number {
  const p = pow10(x.s);
  const mag = x.n < 0n ? -x.n : x.n;
  const r = (2n * mag + p) / (2n * p);
  return Number(x.n < 0n ? -r : r);
}

const tokens = (x: number): number => (Number.isFinite(x) && x > 0 ? Math.trunc(x) : 0);

// ---- quota --------------------------------------------------------------------------------------------------

export type QuotaOptions = {
  /** Calls billed at a fixed price (images: the request's `n`). Default 1. */
  calls?: number;
};

/**
 * The quota a finished call costs. Ratio pricing follows OpenAI usage semantics (core/usage.ts): the prompt
 * includes cached reads (C), cache writes (W), audio input (Ain) and image input (I); the completion includes
 * reasoning and audio output (Aout):
 *   round(((P−C−W−Ain−I) + C·cache + W·cacheWrite + Ain·audio + I·image + (O−Aout)·completion
 *          + Aout·audio·audioCompletion)·M·G)
 * gpt-image-1 is priced this way: its text input at the model ratio, its image input at the image ratio, its
 * output (the generated image) at the completion ratio.
 * Reasoning tokens are part of O and priced as completion, so thinking is always billed (new-api left Gemini's
 * thoughtsTokenCount unbilled, #1014). The text remainders are clamped at 0, so an upstream reporting more cached
 * than prompt tokens cannot produce a negative charge (new-api #5005). Zero tokens cost 0; a priced call with
 * tokens never costs less than 1.
 */
export function computeQuota(
  price: Price,
  usage: Usage,
  tables: PriceTables,
  opts: QuotaOptions = {},
): number {
  if (price.kind === 'fixed') return fixedQuota(price, tables, opts.calls);
  const P = tokens(usage.promptTokens);
  const O = tokens(usage.completionTokens);
  if (P + O === 0) return 0;
  const C = tokens(usage.cachedTokens);
  const W = tokens(usage.cacheWriteTokens);
  const Ain = tokens(usage.audioPromptTokens);
  const Aout = tokens(usage.audioCompletionTokens);
  const I = tokens(usage.imageTokens);
  const int = (n: number): Dec => ({ n: BigInt(n), s: 0 });
  const weighted = add(
    int(Math.max(0, P - C - W - Ain - I)),
    mul(int(C), dec(price.cacheRatio)),
    mul(int(W), dec(price.cacheWriteRatio)),
    mul(int(Ain), dec(price.audioRatio)),
    mul(int(I), dec(price.imageRatio)),
    mul(int(Math.max(0, O - Aout)), dec(price.completionRatio)),
    mul(int(Aout), dec(price.audioRatio), dec(price.audioCompletionRatio)),
  );
  const quota = round(mul(weighted, dec(price.modelRatio), dec(price.groupRatio)));
  if (quota <= 0 && price.modelRatio !== 0 && price.groupRatio !== 0) return 1;
  return quota;
}

function fixedQuota(price: FixedPrice, tables: PriceTables, calls = 1): number {
  return round(
    mul(dec(price.modelPrice), dec(tables.quotaPerUnit), dec(price.groupRatio), dec(tokens(calls))),
  );
}

export type EstimateInput = {
  /**
   * An upper bound of the prompt tokens (core/hold.ts): counted text plus the ceilings of parts that cannot be
   * counted. Priced at the highest rate a prompt token can be billed at (input, cache read, cache write).
   */
  promptTokens: number;
  /** Prompt tokens of audio parts: priced at the audio rate when that is higher. */
  audioPromptTokens?: number;
  /** max_tokens / max_completion_tokens / max_output_tokens, when the client sent one (per output). */
  maxTokens?: number;
  /** Completion tokens per output when the request sets no limit. Default PreConsumedQuota. */
  defaultMaxTokens?: number;
  /** Outputs generated (n, best_of, candidateCount). Default 1. */
  outputs?: number;
  /** See QuotaOptions.calls. */
  calls?: number;
};

const maxDec = (...xs: number[]): Dec =>
  xs.map(dec).reduce((a, b) => (a.n * pow10(b.s) >= b.n * pow10(a.s) ? a : b));

/**
 * The quota held before the call: an upper bound of computeQuota for every usage the request can produce
 * (ADR 009). Ratio pricing:
 *   ceil(((P·max(1, cache, cacheWrite, image) + A·max(1, cache, cacheWrite, audio)
 *          + outputs·(maxTokens ?? defaultMaxTokens)·max(completion, audio·audioCompletion))·M·G)
 * where P is the text-and-media bound and A the audio bound of the prompt (any P token may be an image token). For a model with default cache and
 * audio ratios this is new-api's estimate with the completion part at the completion ratio (new-api prices it
 * at the input rate, so its hold can be far below the real cost). Fixed pricing: exactly computeQuota. The
 * result is clamped to Number.MAX_SAFE_INTEGER (no balance covers that much, so the call is refused for quota).
 */
export function estimateQuota(price: Price, input: EstimateInput, tables: PriceTables): number {
  if (price.kind === 'fixed') return fixedQuota(price, tables, input.calls);
  const perOutput =
    input.maxTokens !== undefined
      ? tokens(input.maxTokens)
      : tokens(input.defaultMaxTokens ?? tables.preConsumedQuota);
  const outputs = Math.max(1, tokens(input.outputs ?? 1));
  const int = (n: number): Dec => ({ n: BigInt(n), s: 0 });
  const promptRate = maxDec(1, price.cacheRatio, price.cacheWriteRatio, price.imageRatio);
  const audioRate = maxDec(1, price.cacheRatio, price.cacheWriteRatio, price.audioRatio);
  const outRate = completionRate(price);
  const weighted = add(
    mul(int(tokens(input.promptTokens)), promptRate),
    mul(int(tokens(input.audioPromptTokens ?? 0)), audioRate),
    mul(int(perOutput), int(outputs), outRate),
  );
  return Math.min(
    Number.MAX_SAFE_INTEGER,
    ceilBig(mul(weighted, dec(price.modelRatio), dec(price.groupRatio))),
  );
}

/** The highest price of one completion token: text at the completion ratio, audio at audio × audio completion. */
function completionRate(price: RatioPrice): Dec {
  const text = dec(price.completionRatio);
  const audio = mul(dec(price.audioRatio), dec(price.audioCompletionRatio));
  return text.n * pow10(audio.s) >= audio.n * pow10(text.s) ? text : audio;
}

/** ceil as a number, saturating at Number.MAX_SAFE_INTEGER instead of losing precision. */
function ceilBig(x: Dec): number {
  const p = pow10(x.s);
  let q = x.n / p;
  if (x.n > 0n && q * p !== x.n) q += 1n;
  return q > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(q);
}

// ---- log details --------------------------------------------------------------------------------------------

export type PriceDetailExtras = {
  /** First-response time in ms. */
  frtMs: number;
  /** Channels tried, in order (the last one served). */
  channelIds: readonly number[];
  /** The model sent upstream, when model mapping changed it. */
  upstreamModel?: string;
  /** The requested model (to decide whether mapping changed anything). */
  requestModel?: string;
  /** Usage was counted locally because the upstream reported none. */
  usageEstimated?: boolean;
  reasoningEffort?: string;
};

/** The log row's `other` JSON, with new-api's keys (gateway-behaviour §3.4). */
export type LogOther = {
  model_ratio: number;
  group_ratio: number;
  completion_ratio: number;
  cache_tokens: number;
  cache_ratio: number;
  cache_creation_tokens: number;
  cache_creation_ratio: number;
  /** USD per call; -1 when the call was priced by ratio. */
  model_price: number;
  reasoning_tokens: number;
  frt: number;
  admin_info: { use_channel: string[] };
  is_model_mapped?: true;
  upstream_model_name?: string;
  usage_estimated?: true;
  reasoning_effort?: string;
  audio?: true;
  text_input?: number;
  text_output?: number;
  audio_input?: number;
  audio_output?: number;
  audio_ratio?: number;
  audio_completion_ratio?: number;
  image?: true;
  image_input?: number;
  image_ratio?: number;
};

export function priceDetails(price: Price, usage: Usage, extras: PriceDetailExtras): LogOther {
  const ratio = price.kind === 'ratio' ? price : null;
  const out: LogOther = {
    model_ratio: ratio?.modelRatio ?? 0,
    group_ratio: price.groupRatio,
    completion_ratio: ratio?.completionRatio ?? 0,
    cache_tokens: tokens(usage.cachedTokens),
    cache_ratio: ratio?.cacheRatio ?? 1,
    cache_creation_tokens: tokens(usage.cacheWriteTokens),
    cache_creation_ratio: ratio?.cacheWriteRatio ?? 1,
    model_price: price.kind === 'fixed' ? price.modelPrice : -1,
    reasoning_tokens: tokens(usage.reasoningTokens),
    frt: extras.frtMs,
    // new-api stores channel ids as strings here; the console joins them with "->".
    admin_info: { use_channel: extras.channelIds.map(String) },
  };
  if (extras.upstreamModel && extras.upstreamModel !== extras.requestModel) {
    out.is_model_mapped = true;
    out.upstream_model_name = extras.upstreamModel;
  }
  if (extras.usageEstimated) out.usage_estimated = true;
  if (extras.reasoningEffort) out.reasoning_effort = extras.reasoningEffort;
  const ain = tokens(usage.audioPromptTokens);
  const aout = tokens(usage.audioCompletionTokens);
  if (ain + aout > 0) {
    out.audio = true;
    out.text_input = Math.max(0, tokens(usage.promptTokens) - ain);
    out.text_output = Math.max(0, tokens(usage.completionTokens) - aout);
    out.audio_input = ain;
    out.audio_output = aout;
    out.audio_ratio = ratio?.audioRatio ?? 1;
    out.audio_completion_ratio = ratio?.audioCompletionRatio ?? 1;
  }
  const img = tokens(usage.imageTokens);
  if (img > 0) {
    out.image = true;
    out.image_input = img;
    out.image_ratio = ratio?.imageRatio ?? 1;
  }
  return out;
}

/**
 * The log row's human-readable `content`: "model ratio 1.25, completion ratio 4, group ratio 1" or
 * "model price $0.04, group ratio 1". With `usage`, the cache and audio ratios that applied are appended.
 */
export function priceContent(price: Price, usage?: Usage): string {
  if (price.kind === 'fixed') return `model price $${price.modelPrice}, group ratio ${price.groupRatio}`;
  const parts = [
    price.unpriced ? 'model ratio 0 (unpriced, self-use mode)' : `model ratio ${price.modelRatio}`,
    `completion ratio ${price.completionRatio}`,
    `group ratio ${price.groupRatio}`,
  ];
  if (usage) {
    if (tokens(usage.cachedTokens) > 0) parts.push(`cache ratio ${price.cacheRatio}`);
    if (tokens(usage.cacheWriteTokens) > 0) parts.push(`cache write ratio ${price.cacheWriteRatio}`);
    if (tokens(usage.audioPromptTokens) + tokens(usage.audioCompletionTokens) > 0) {
      parts.push(`audio ratio ${price.audioRatio}`, `audio completion ratio ${price.audioCompletionRatio}`);
    }
    if (tokens(usage.imageTokens) > 0) parts.push(`image ratio ${price.imageRatio}`);
  }
  return parts.join(', ');
}
