/** Usage-log constants and pure helpers shared by the server and the /log page (client-safe: no server imports). */

import { formatTimestamp, parseDateTimeLocal, toDateTimeLocal as toLocalInput } from '#app/utils/time.ts';

/** Seed 001 §4: log types. 0 in a filter means "all". */
export const LOG_TYPES = [1, 2, 3, 4] as const;
export type LogTypeKey = 'topup' | 'consume' | 'manage' | 'system' | 'unknown';

export function logTypeKey(type: number): LogTypeKey {
  if (type === 1) return 'topup';
  if (type === 2) return 'consume';
  if (type === 3) return 'manage';
  if (type === 4) return 'system';
  return 'unknown';
}

/**
 * The list answers an exact `total` up to this many matching rows and stops counting there (`total_capped`),
 * so a page never counts millions of rows; "next" comes from fetching page_size + 1 rows.
 */
export const LOG_COUNT_CAP = 10_000;

export type Tone = 'green' | 'orange' | 'red';

/** Seed 001 §4: response time (seconds) under 101 green, under 300 orange, otherwise red. */
export function useTimeTone(seconds: number): Tone {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

/** Seed 001 §4: first-token time (ms) under 3 s green, under 10 s orange; beyond is not specified (red here). */
export function frtTone(ms: number): Tone {
  if (ms < 3000) return 'green';
  if (ms < 10000) return 'orange';
  return 'red';
}

/** The parts of a log's `other` JSON the page shows (seed 001 §3 Log record; gateway behaviour §3.4). */
export type LogDetails = {
  modelRatio?: number;
  completionRatio?: number;
  groupRatio?: number;
  /** fixed price per call in USD; undefined (or -1 in the JSON) when ratio-priced */
  modelPrice?: number;
  cacheTokens?: number;
  cacheRatio?: number;
  cacheCreationTokens?: number;
  cacheCreationRatio?: number;
  reasoningTokens?: number;
  reasoningEffort?: string;
  /** first-response time in ms */
  frt?: number;
  isModelMapped: boolean;
  upstreamModelName?: string;
  /** admin only: channel ids tried, in order */
  useChannel?: string[];
};

function num(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** Reads `other` leniently: bad JSON or wrong types give an empty result rather than an error. */
export function parseOther(other: string): LogDetails {
  let o: Record<string, unknown> = {};
  try {
    const parsed: unknown = other ? JSON.parse(other) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) o = parsed as Record<string, unknown>;
  } catch {
    // keep empty
  }
  const price = num(o.model_price);
  const admin = o.admin_info;
  const chain =
    admin && typeof admin === 'object' && Array.isArray((admin as { use_channel?: unknown }).use_channel)
      ? ((admin as { use_channel: unknown[] }).use_channel.map(String) as string[])
      : undefined;
  return {
    modelRatio: num(o.model_ratio),
    completionRatio: num(o.completion_ratio),
    groupRatio: num(o.group_ratio),
    modelPrice: price !== undefined && price >= 0 ? price : undefined,
    cacheTokens: num(o.cache_tokens),
    cacheRatio: num(o.cache_ratio),
    cacheCreationTokens: num(o.cache_creation_tokens),
    cacheCreationRatio: num(o.cache_creation_ratio),
    reasoningTokens: num(o.reasoning_tokens),
    reasoningEffort: typeof o.reasoning_effort === 'string' ? o.reasoning_effort : undefined,
    frt: num(o.frt),
    isModelMapped: o.is_model_mapped === true && typeof o.upstream_model_name === 'string',
    upstreamModelName: typeof o.upstream_model_name === 'string' ? o.upstream_model_name : undefined,
    useChannel: chain,
  };
}

/** Unix seconds as 'YYYY-MM-DD HH:mm:ss' in the user's zone (app/utils/time.ts). */
export function formatLogTime(seconds: number, timeZone: string): string {
  if (!seconds) return '-';
  return formatTimestamp(seconds, timeZone);
}

/** Unix seconds as a `datetime-local` value in the user's zone, and back; '' / invalid is 0. */
export function toDateTimeLocal(seconds: number, timeZone: string): string {
  return toLocalInput(seconds, timeZone);
}

export function fromDateTimeLocal(value: string | null | undefined, timeZone: string): number {
  return parseDateTimeLocal(value ?? '', timeZone) ?? 0;
}

/** Midnight of the day `nowSeconds` falls on, in `timeZone`, as unix seconds. */
export function startOfDay(nowSeconds: number, timeZone: string): number {
  return fromDateTimeLocal(`${toLocalInput(nowSeconds, timeZone).slice(0, 10)}T00:00`, timeZone);
}

// Wire format (new-api's field names; `channel` is the channel id)

export type LogWire = {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel: number;
  channel_name: string;
  group: string;
  other: string;
  ip: string;
};

export type LogPage = {
  items: LogWire[];
  page: number;
  page_size: number;
  /** exact up to LOG_COUNT_CAP; when total_capped, at least that many */
  total: number;
  total_capped: boolean;
  has_more: boolean;
};

export type LogStat = { quota: number; rpm: number; tpm: number };

export type LogUserInfo = {
  id: number;
  username: string;
  quota: number;
  used_quota: number;
  request_count: number;
  group: string;
};

/** The content Billing writes on a channel test's consume log when the relay sent none (billing.server.ts). */
export const CHANNEL_TEST_CONTENT = '模型测试';
