/**
 * Model pricing as the relay bills it (seed 001 §2.13, §3 "Pricing entry", §4 sort, §9 price display).
 *
 * Every figure comes from the relay's own pure functions (resolvePrice / computeQuota over priceTablesFrom), so
 * the page can never disagree with a bill: "input price per 1M tokens" is literally the quota the relay charges
 * for 1,000,000 prompt tokens, divided by QuotaPerUnit. With the default QuotaPerUnit (500000) that is the seed's
 * "model ratio × 2 × group ratio" USD, and the output price is that × completion ratio.
 */
import { Ability } from '@switchyard/db/entities/ability.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { DEFAULT_GROUP } from '@switchyard/db/entities/user.ts';
import {
  computeQuota,
  type OptionReader,
  type Price,
  type PriceTables,
  priceTablesFrom,
  resolvePrice,
} from '@switchyard/relay/core/pricing.ts';
import { usage, ZERO_USAGE } from '@switchyard/relay/core/usage.ts';
import type { TFunction } from 'i18next';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { PRICING_SORTS, type PricingSort } from '#app/domain/pricing/constants.ts';
import { usableGroups } from '#app/domain/tokens/tokens.server.ts';

/** Reads options and the database; `actor` is null for a visitor. */
export type PricingCtx = {
  em: RequestCtx['em'];
  options: OptionReader;
  actor: SessionUser | null;
  t?: TFunction;
};

/** Seed 001 §3 "Pricing entry". quota_type 0 = by usage (tokens), 1 = per call. */
export type PricingEntry = {
  model_name: string;
  quota_type: 0 | 1;
  model_ratio: number;
  completion_ratio: number;
  /** USD per call (quota_type 1), else 0. */
  model_price: number;
  /** Groups (among the viewer's usable groups) with an enabled channel serving the model. */
  enable_groups: string[];
};

/** GET /api/pricing beside the envelope's `data`. */
export type PricingResponse = {
  data: PricingEntry[];
  group_ratio: Record<string, number>;
  usable_group: Record<string, string>;
};

/** A group name no GroupRatio can hold: the model's own price, before any group ratio. */
const NO_GROUP = '\u0000';

/** The price of `model` alone (group ratio 1), or null when it has none (the relay refuses it). */
function modelOnlyPrice(tables: PriceTables, model: string): Price | null {
  return resolvePrice({ ...tables, groupRatio: { [NO_GROUP]: 1 } }, model, NO_GROUP);
}

/** Enabled (group, model) routes: model -> groups. Ability.enabled follows the channel's status. */
export async function enabledRoutes(em: PricingCtx['em']): Promise<Map<string, Set<string>>> {
  const rows = await em.find(Ability, { enabled: true }, { fields: ['group', 'model'] });
  const routes = new Map<string, Set<string>>();
  for (const row of rows) {
    const groups = routes.get(row.model) ?? new Set<string>();
    routes.set(row.model, groups);
    groups.add(row.group);
  }
  return routes;
}

/** GET /api/channel/models_enabled: the names of models some enabled channel serves, sorted. */
export async function enabledModels(em: PricingCtx['em']): Promise<string[]> {
  return [...(await enabledRoutes(em)).keys()].sort();
}

/**
 * GET /api/models: channel type -> the models configured on channels of that type (sorted, distinct). The seed
 * leaves the shape open; this is new-api's `{ "<type>": [names] }`.
 */
export async function channelModelsByType(em: PricingCtx['em']): Promise<Record<string, string[]>> {
  const rows = await em.find(Channel, {}, { fields: ['type', 'models'] });
  const byType = new Map<number, Set<string>>();
  for (const row of rows) {
    const set = byType.get(row.type) ?? new Set<string>();
    byType.set(row.type, set);
    for (const m of row.models.split(',')) if (m.trim()) set.add(m.trim());
  }
  const out: Record<string, string[]> = {};
  for (const [type, set] of [...byType].sort((a, b) => a[0] - b[0])) out[String(type)] = [...set].sort();
  return out;
}

/**
 * The groups the viewer may use (name -> description): a user's are the token groups (UserUsableGroups plus
 * their own group); a visitor sees UserUsableGroups, or just `default` when that is empty.
 */
export function viewerUsableGroups(ctx: Pick<PricingCtx, 'options' | 'actor'>): Record<string, string> {
  if (ctx.actor) {
    const groups = usableGroups({ options: ctx.options as never, actor: ctx.actor });
    if (Object.keys(groups).length > 0) return groups;
    return { [ctx.actor.group]: ctx.actor.group };
  }
  const configured = ctx.options.get('UserUsableGroups');
  return Object.keys(configured).length > 0 ? { ...configured } : { [DEFAULT_GROUP]: DEFAULT_GROUP };
}

/** GroupRatio restricted to the viewer's usable groups (groups without a ratio are not usable at all). */
function visibleGroupRatio(tables: PriceTables, usable: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const group of Object.keys(usable)) {
    if (Object.hasOwn(tables.groupRatio, group)) out[group] = tables.groupRatio[group] as number;
  }
  return out;
}

/** GET /api/user/self/groups (seed 001 §3 "Group option"): usable group -> {desc, ratio}. */
export function selfGroups(
  ctx: Pick<PricingCtx, 'options' | 'actor'>,
): Record<string, { desc: string; ratio: number }> {
  const usable = viewerUsableGroups(ctx);
  const ratios = visibleGroupRatio(priceTablesFrom(ctx.options), usable);
  const out: Record<string, { desc: string; ratio: number }> = {};
  for (const [group, ratio] of Object.entries(ratios)) out[group] = { desc: usable[group] ?? group, ratio };
  return out;
}

function entryOf(tables: PriceTables, model: string, groups: Iterable<string>): PricingEntry {
  const price = modelOnlyPrice(tables, model);
  return {
    model_name: model,
    quota_type: price?.kind === 'fixed' ? 1 : 0,
    model_ratio: price?.kind === 'ratio' ? price.modelRatio : 0,
    completion_ratio: price?.kind === 'ratio' ? price.completionRatio : 0,
    model_price: price?.kind === 'fixed' ? price.modelPrice : 0,
    enable_groups: [...groups].sort(),
  };
}

/** Seed 001 §4: names starting with "gpt" first, by-usage before per-call, then by name. */
export function comparePricing(a: PricingEntry, b: PricingEntry): number {
  const ga = a.model_name.startsWith('gpt') ? 0 : 1;
  const gb = b.model_name.startsWith('gpt') ? 0 : 1;
  if (ga !== gb) return ga - gb;
  if (a.quota_type !== b.quota_type) return a.quota_type - b.quota_type;
  return a.model_name < b.model_name ? -1 : a.model_name > b.model_name ? 1 : 0;
}

/**
 * GET /api/pricing: one entry per model an enabled channel serves in one of the viewer's usable groups,
 * sorted as §4 says, plus the viewer's group ratios and usable groups.
 */
export async function pricing(ctx: PricingCtx): Promise<PricingResponse> {
  const tables = priceTablesFrom(ctx.options);
  const usable = viewerUsableGroups(ctx);
  const groupRatio = visibleGroupRatio(tables, usable);
  const data: PricingEntry[] = [];
  for (const [model, groups] of await enabledRoutes(ctx.em)) {
    const visible = [...groups].filter((g) => Object.hasOwn(groupRatio, g));
    if (visible.length > 0) data.push(entryOf(tables, model, visible));
  }
  data.sort(comparePricing);
  return { data, group_ratio: groupRatio, usable_group: usable };
}

// ---- the /pricing page ---------------------------------------------------------------------------------------

export type PricingRow = PricingEntry & {
  /** False when the model has no price: the relay refuses it ("ratio or price not set"). */
  priced: boolean;
  /** The viewed group has an enabled channel for this model. */
  available: boolean;
  /** Quota the relay charges, with the viewed group's ratio: 1M prompt tokens / 1M completion tokens / a call. */
  inputQuota: number;
  outputQuota: number;
  callQuota: number;
  inputUsd: number;
  outputUsd: number;
  callUsd: number;
};

export type PricingPage = {
  rows: PricingRow[];
  total: number;
  page: number;
  pages: number;
  pageSize: number;
  q: string;
  sort: PricingSort;
  /** The group whose ratio the prices include. */
  group: string;
  groupRatio: number;
  /** The viewer's own group (visitors: default). */
  ownGroup: string;
  groups: Array<{ name: string; desc: string; ratio: number }>;
  display: { displayInCurrency: boolean; quotaPerUnit: number };
  signedIn: boolean;
};

const PER_MILLION = 1_000_000;

function rowOf(tables: PriceTables, entry: PricingEntry, group: string): PricingRow {
  const price = resolvePrice(tables, entry.model_name, group);
  const q = (u: Parameters<typeof computeQuota>[1]) => (price ? computeQuota(price, u, tables) : 0);
  const ratioPriced = price?.kind === 'ratio';
  const inputQuota = ratioPriced ? q(usage({ promptTokens: PER_MILLION })) : 0;
  const outputQuota = ratioPriced ? q(usage({ completionTokens: PER_MILLION })) : 0;
  const callQuota = price?.kind === 'fixed' ? q(ZERO_USAGE) : 0;
  const usd = (quota: number) => quota / tables.quotaPerUnit;
  return {
    ...entry,
    priced: price !== null,
    available: entry.enable_groups.includes(group),
    inputQuota,
    outputQuota,
    callQuota,
    inputUsd: usd(inputQuota),
    outputUsd: usd(outputQuota),
    callUsd: usd(callQuota),
  };
}

function sortRows(rows: PricingRow[], sort: PricingSort): PricingRow[] {
  const byName = (a: PricingRow, b: PricingRow) =>
    a.model_name < b.model_name ? -1 : a.model_name > b.model_name ? 1 : 0;
  switch (sort) {
    case 'name':
      return rows.sort(byName);
    case 'input':
      // Cheapest first; per-call models by their call price, after the token-priced ones.
      return rows.sort(
        (a, b) =>
          a.quota_type - b.quota_type ||
          (a.quota_type === 1 ? a.callQuota - b.callQuota : a.inputQuota - b.inputQuota) ||
          byName(a, b),
      );
    case 'ratio':
      return rows.sort(
        (a, b) => a.quota_type - b.quota_type || a.model_ratio - b.model_ratio || byName(a, b),
      );
    default:
      return rows.sort(comparePricing);
  }
}

export type PricingQuery = { q?: string; group?: string; sort?: string; page?: number; pageSize?: number };

/**
 * The /pricing page: the viewer's pricing with the chosen group's ratio applied (a usable group, else the
 * viewer's own, else default), filtered by a case-insensitive substring, sorted, one page of rows.
 */
export async function pricingPage(ctx: PricingCtx, query: PricingQuery): Promise<PricingPage> {
  const tables = priceTablesFrom(ctx.options);
  const { data, group_ratio, usable_group } = await pricing(ctx);
  const ownGroup = ctx.actor?.group ?? DEFAULT_GROUP;
  const fallback = Object.hasOwn(group_ratio, ownGroup)
    ? ownGroup
    : Object.hasOwn(tables.groupRatio, DEFAULT_GROUP)
      ? DEFAULT_GROUP
      : (Object.keys(group_ratio)[0] ?? DEFAULT_GROUP);
  const group = query.group && Object.hasOwn(group_ratio, query.group) ? query.group : fallback;
  // resolvePrice needs the viewed group in GroupRatio; a site without one prices at ratio 1.
  const priced = Object.hasOwn(tables.groupRatio, group)
    ? tables
    : { ...tables, groupRatio: { ...tables.groupRatio, [group]: 1 } };
  const q = (query.q ?? '').trim();
  const needle = q.toLowerCase();
  const matching = data.filter((e) => e.model_name.toLowerCase().includes(needle));
  const sort = (PRICING_SORTS as readonly string[]).includes(query.sort ?? '')
    ? (query.sort as PricingSort)
    : 'default';
  const rows = sortRows(
    matching.map((e) => rowOf(priced, e, group)),
    sort,
  );
  const pageSize = query.pageSize ?? 10;
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const page = Math.min(Math.max(1, query.page ?? 1), pages);
  return {
    rows: rows.slice((page - 1) * pageSize, page * pageSize),
    total: rows.length,
    page,
    pages,
    pageSize,
    q,
    sort,
    group,
    groupRatio: priced.groupRatio[group] as number,
    ownGroup,
    groups: Object.entries(group_ratio).map(([name, ratio]) => ({
      name,
      desc: usable_group[name] ?? name,
      ratio,
    })),
    display: {
      displayInCurrency: ctx.options.get('DisplayInCurrencyEnabled'),
      quotaPerUnit: tables.quotaPerUnit,
    },
    signedIn: ctx.actor !== null,
  };
}
