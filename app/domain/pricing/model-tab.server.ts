/**
 * Settings "modelTab" (seed 000 §2 settings, §4 "Pricing rows", §5 model ratio table, §7 options and pricing):
 * the ModelPrice / ModelRatio / CompletionRatio tables edited row by row, in batch, or as JSON; the list of
 * served models without a price; reset to the defaults. Every write goes through `updateOption` (validated,
 * one AuditEntry per key, announced to the relay) and only for keys that changed (seed 000 §4).
 */
import { Role } from '@switchyard/db/entities/user.ts';
import { OPTIONS, type OptionKey } from '@switchyard/db/options/registry.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import { priceTablesFrom, resolvePrice } from '@switchyard/relay/core/pricing.ts';
import type { TFunction } from 'i18next';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError } from '#app/domain/errors.ts';
import { updateOption } from '#app/domain/settings/options.server.ts';
import { enabledModels } from './pricing.server.ts';

export type ModelTabCtx = {
  em: RequestCtx['em'];
  options: OptionService;
  actor: SessionUser;
  t: TFunction;
  /** Client address for the audit rows. */
  ip: string;
};

export const PRICE_KEYS = ['ModelPrice', 'ModelRatio', 'CompletionRatio'] as const;
type PriceKey = (typeof PRICE_KEYS)[number];
type Tables = Record<PriceKey, Record<string, number>>;

/** Seed 000 §7: GET /api/product/getv3price. */
export function v3Price(options: Pick<OptionService, 'get'>): Tables {
  return {
    ModelPrice: options.get('ModelPrice'),
    ModelRatio: options.get('ModelRatio'),
    CompletionRatio: options.get('CompletionRatio'),
  };
}

export function requireOptionAdmin(ctx: Pick<ModelTabCtx, 'actor' | 't'>): void {
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('pricing:errors.forbidden'));
}

/** Seed 000 §3 "Model pricing row". Absent numbers are unset (a fixed price excludes both ratios). */
export type ModelRow = { name: string; price?: number; ratio?: number; completion?: number };

export function modelRows(options: Pick<OptionService, 'get'>): ModelRow[] {
  const tables = v3Price(options);
  const names = new Set<string>();
  for (const key of PRICE_KEYS) for (const name of Object.keys(tables[key])) names.add(name);
  return [...names].sort().map((name) => ({
    name,
    ...(Object.hasOwn(tables.ModelPrice, name) ? { price: tables.ModelPrice[name] } : {}),
    ...(Object.hasOwn(tables.ModelRatio, name) ? { ratio: tables.ModelRatio[name] } : {}),
    ...(Object.hasOwn(tables.CompletionRatio, name) ? { completion: tables.CompletionRatio[name] } : {}),
  }));
}

/** Served models (an enabled channel has them) the relay cannot price: "ratio or price not set". */
export async function unsetModels(ctx: Pick<ModelTabCtx, 'em' | 'options'>): Promise<string[]> {
  // Self-use mode makes unpriced models free at billing time; they still have no ratio set.
  const tables = { ...priceTablesFrom(ctx.options), selfUseMode: false, groupRatio: { x: 1 } };
  return (await enabledModels(ctx.em)).filter((model) => resolvePrice(tables, model, 'x') === null);
}

/** '' = unset; otherwise a finite number >= 0 ("please enter a number"). */
function numberField(ctx: Pick<ModelTabCtx, 't'>, field: string, raw: unknown): number | undefined {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  if (text === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || !/^[0-9.eE+-]+$/.test(text))
    throw new InputError(ctx.t('pricing:errors.notNumber'), { [field]: [ctx.t('pricing:errors.notNumber')] });
  return n;
}

/** Writes the keys whose table differs from the stored one; returns how many were written. */
async function writeTables(ctx: ModelTabCtx, next: Tables): Promise<number> {
  const current = v3Price(ctx.options);
  const changed = PRICE_KEYS.filter((key) => JSON.stringify(current[key]) !== JSON.stringify(next[key]));
  // Each key is its own write and the relay reloads each as it lands: a key that only adds or changes entries
  // goes first, removals last, so switching a model between fixed price and ratios never leaves it unpriced.
  const removes = (key: PriceKey) =>
    Object.keys(current[key]).some((name) => !Object.hasOwn(next[key], name));
  changed.sort((a, b) => Number(removes(a)) - Number(removes(b)));
  let written = 0;
  for (const key of changed) {
    try {
      // The one option write path (validation, root-only check, audit, announcement).
      await updateOption(ctx, key, JSON.stringify(next[key]));
    } catch (error) {
      if (error instanceof InputError) throw new InputError(error.message, { [key]: [error.message] });
      throw error;
    }
    written += 1;
  }
  return written;
}

function copyTables(options: Pick<OptionService, 'get'>): Tables {
  const t = v3Price(options);
  return {
    ModelPrice: { ...t.ModelPrice },
    ModelRatio: { ...t.ModelRatio },
    CompletionRatio: { ...t.CompletionRatio },
  };
}

function removeModel(tables: Tables, name: string): void {
  for (const key of PRICE_KEYS) delete tables[key][name];
}

export type SaveModelInput = {
  name?: unknown;
  /** The row's name before the edit; absent when adding. */
  original?: unknown;
  price?: unknown;
  ratio?: unknown;
  completion?: unknown;
};

/**
 * Adds or edits one row. The name is unique ("model name already exists"); a fixed price excludes the ratios
 * (seed 000 §4), so saving a price drops them; a row with neither price nor ratio would be unpriced, refused.
 */
export async function saveModel(ctx: ModelTabCtx, input: SaveModelInput): Promise<ModelRow> {
  requireOptionAdmin(ctx);
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  const original = typeof input.original === 'string' ? input.original.trim() : '';
  if (!name || name.length > 255)
    throw new InputError(ctx.t('pricing:errors.nameRequired'), {
      name: [ctx.t('pricing:errors.nameRequired')],
    });
  const price = numberField(ctx, 'price', input.price);
  const ratio = price === undefined ? numberField(ctx, 'ratio', input.ratio) : undefined;
  const completion = price === undefined ? numberField(ctx, 'completion', input.completion) : undefined;
  if (price === undefined && ratio === undefined)
    throw new InputError(ctx.t('pricing:errors.priceOrRatio'), {
      ratio: [ctx.t('pricing:errors.priceOrRatio')],
    });
  const existing = new Set(modelRows(ctx.options).map((r) => r.name));
  if (original && !existing.has(original)) throw new NotFoundError(ctx.t('pricing:errors.modelNotFound'));
  if (name !== original && existing.has(name))
    throw new InputError(ctx.t('pricing:errors.duplicateName'), {
      name: [ctx.t('pricing:errors.duplicateName')],
    });
  const next = copyTables(ctx.options);
  if (original) removeModel(next, original);
  removeModel(next, name);
  if (price !== undefined) next.ModelPrice[name] = price;
  if (ratio !== undefined) next.ModelRatio[name] = ratio;
  if (completion !== undefined) next.CompletionRatio[name] = completion;
  await writeTables(ctx, next);
  return { name, price, ratio, completion };
}

export async function deleteModel(ctx: ModelTabCtx, name: string): Promise<void> {
  requireOptionAdmin(ctx);
  if (!modelRows(ctx.options).some((r) => r.name === name))
    throw new NotFoundError(ctx.t('pricing:errors.modelNotFound'));
  const next = copyTables(ctx.options);
  removeModel(next, name);
  await writeTables(ctx, next);
}

export const BATCH_MODES = ['ratio', 'completion', 'both', 'price'] as const;
export type BatchMode = (typeof BATCH_MODES)[number];

/**
 * Sets one value (or both ratios) on the selected models (seed 000 §5): a selection is required, both-ratios
 * mode needs both numbers. Setting a price drops the ratios; setting a ratio drops the fixed price.
 */
export async function batchSet(
  ctx: ModelTabCtx,
  input: { models: unknown; mode: unknown; value?: unknown; value2?: unknown },
): Promise<number> {
  requireOptionAdmin(ctx);
  const models = [
    ...new Set(
      (Array.isArray(input.models) ? input.models : [input.models])
        .filter((m): m is string => typeof m === 'string')
        .map((m) => m.trim())
        .filter(Boolean),
    ),
  ];
  if (models.length === 0) throw new InputError(ctx.t('pricing:errors.selectModels'), { models: [] });
  const mode = (BATCH_MODES as readonly unknown[]).includes(input.mode) ? (input.mode as BatchMode) : 'ratio';
  const value = numberField(ctx, 'value', input.value);
  const value2 = mode === 'both' ? numberField(ctx, 'value2', input.value2) : undefined;
  if (value === undefined || (mode === 'both' && value2 === undefined))
    throw new InputError(ctx.t('pricing:errors.notNumber'), { value: [ctx.t('pricing:errors.notNumber')] });
  const next = copyTables(ctx.options);
  for (const name of models) {
    if (mode === 'price') {
      next.ModelPrice[name] = value;
      delete next.ModelRatio[name];
      delete next.CompletionRatio[name];
      continue;
    }
    delete next.ModelPrice[name];
    if (mode === 'ratio' || mode === 'both') next.ModelRatio[name] = value;
    if (mode === 'completion') next.CompletionRatio[name] = value;
    if (mode === 'both') next.CompletionRatio[name] = value2 as number;
  }
  await writeTables(ctx, next);
  return models.length;
}

/** Parses one JSON text area: valid JSON ("not a valid JSON string") holding model -> number. */
function parseTable(ctx: Pick<ModelTabCtx, 't'>, key: PriceKey, raw: unknown): Record<string, number> {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : '');
  } catch {
    throw new InputError(ctx.t('pricing:errors.invalidJson'), {
      [key]: [ctx.t('pricing:errors.invalidJson')],
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InputError(ctx.t('pricing:errors.invalidJson'), {
      [key]: [ctx.t('pricing:errors.invalidJson')],
    });
  for (const n of Object.values(value)) {
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
      throw new InputError(ctx.t('pricing:errors.notNumber'), { [key]: [ctx.t('pricing:errors.notNumber')] });
  }
  return value as Record<string, number>;
}

/** Saves the three JSON text areas; nothing changed is refused ("you seem to have changed nothing"). */
export async function saveJson(ctx: ModelTabCtx, input: Partial<Record<PriceKey, unknown>>): Promise<number> {
  requireOptionAdmin(ctx);
  const current = v3Price(ctx.options);
  const next = { ...current };
  for (const key of PRICE_KEYS) if (input[key] !== undefined) next[key] = parseTable(ctx, key, input[key]);
  const written = await writeTables(ctx, next);
  if (written === 0) throw new InputError(ctx.t('pricing:errors.nothingChanged'));
  return written;
}

/** POST /api/option/rest_model_ratio: the three tables back to the shipped defaults. */
export async function resetModelRatios(ctx: ModelTabCtx): Promise<number> {
  requireOptionAdmin(ctx);
  const defaults = {} as Tables;
  for (const key of PRICE_KEYS)
    defaults[key] = JSON.parse(OPTIONS[key as OptionKey].default) as Record<string, number>;
  return writeTables(ctx, defaults);
}
