/**
 * The content pages (seed 001 §2.1: /, /about, /guide, /usebook), generated from the site's own settings: the
 * API address (ServerAddress), the models it serves (the same data as GET /api/pricing), group ratios, quota
 * units and the top-up, rate-limit and chat options.
 */
import { Token, TokenStatus } from '@switchyard/db/entities/token.ts';
import { chatTabs, serverAddress } from '#app/domain/content/chat-links.ts';
import { type PricingCtx, pricing, pricingPage } from '#app/domain/pricing/pricing.server.ts';
import { getPublicStatus, type PublicStatus } from '#app/domain/status/status.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { FALLBACK_MODEL, guideSnippets, pickExampleModel, type Snippets } from './snippets.ts';

type Services = Pick<ConsoleServices, 'options' | 'version' | 'startedAt'>;

/** How many model names the guide lists besides the example. */
const LISTED_MODELS = 12;

export type GuideView = {
  systemName: string;
  address: string;
  baseUrl: string;
  /** The example's model, a model this site serves; null when it serves none. */
  model: string | null;
  exampleModel: string;
  models: string[];
  modelCount: number;
  signedIn: boolean;
  /** The viewer's enabled tokens (null for a visitor). */
  enabledTokens: number | null;
  snippets: Snippets;
};

export async function guideView(services: Services, ctx: PricingCtx, requestUrl: string): Promise<GuideView> {
  const status = getPublicStatus(services);
  const address = serverAddress(status.server_address, requestUrl);
  const { data } = await pricing(ctx);
  const model = pickExampleModel(data);
  const exampleModel = model ?? FALLBACK_MODEL;
  const enabledTokens = ctx.actor
    ? await ctx.em.count(Token, { userId: ctx.actor.id, status: TokenStatus.Enabled, deletedAt: null })
    : null;
  return {
    systemName: status.system_name,
    address,
    baseUrl: `${address}/v1`,
    model,
    exampleModel,
    models: data.map((e) => e.model_name).slice(0, LISTED_MODELS),
    modelCount: data.length,
    signedIn: ctx.actor !== null,
    enabledTokens,
    snippets: guideSnippets(address, exampleModel),
  };
}

export type HomeView = {
  systemName: string;
  address: string;
  baseUrl: string;
  modelCount: number;
  version: string;
  startTime: number;
  signedIn: boolean;
  selfUse: boolean;
};

export async function homeView(services: Services, ctx: PricingCtx, requestUrl: string): Promise<HomeView> {
  const status = getPublicStatus(services);
  const address = serverAddress(status.server_address, requestUrl);
  const { data } = await pricing(ctx);
  return {
    systemName: status.system_name,
    address,
    baseUrl: `${address}/v1`,
    modelCount: data.length,
    version: status.version,
    startTime: status.start_time,
    signedIn: ctx.actor !== null,
    selfUse: status.self_use_mode_enabled,
  };
}

export type UsebookView = {
  systemName: string;
  signedIn: boolean;
  status: Pick<
    PublicStatus,
    | 'quota_per_unit'
    | 'display_in_currency'
    | 'enable_online_topup'
    | 'min_topup'
    | 'top_up_link'
    | 'self_use_mode_enabled'
    | 'enable_data_export'
  >;
  groups: Array<{ name: string; desc: string; ratio: number }>;
  /** The price of the example model in the viewer's group, as /pricing shows it. */
  example: {
    model: string;
    group: string;
    quotaType: 0 | 1;
    inputUsd: number;
    outputUsd: number;
    callUsd: number;
  } | null;
  rateLimit: { count: number; minutes: number } | null;
  chats: Array<{ id: string; name: string }>;
};

function rateLimitOf(options: PricingCtx['options']): UsebookView['rateLimit'] {
  if (!options.get('ModelRequestRateLimitEnabled')) return null;
  const count = Number(options.get('ModelRequestRateLimitCount'));
  const minutes = Number(options.get('ModelRequestRateLimitDurationMinutes'));
  return count > 0 && minutes > 0 ? { count, minutes } : null;
}

export async function usebookView(services: Services, ctx: PricingCtx): Promise<UsebookView> {
  const status = getPublicStatus(services);
  const { data } = await pricing(ctx);
  const model = pickExampleModel(data);
  const page = await pricingPage(ctx, { q: model ?? '', pageSize: 100 });
  const row = model ? page.rows.find((r) => r.model_name === model && r.priced) : undefined;
  return {
    systemName: status.system_name,
    signedIn: ctx.actor !== null,
    status: {
      quota_per_unit: status.quota_per_unit,
      display_in_currency: status.display_in_currency,
      enable_online_topup: status.enable_online_topup,
      min_topup: status.min_topup,
      top_up_link: status.top_up_link,
      self_use_mode_enabled: status.self_use_mode_enabled,
      enable_data_export: status.enable_data_export,
    },
    groups: page.groups,
    example: row
      ? {
          model: row.model_name,
          group: page.group,
          quotaType: row.quota_type,
          inputUsd: row.inputUsd,
          outputUsd: row.outputUsd,
          callUsd: row.callUsd,
        }
      : null,
    rateLimit: rateLimitOf(ctx.options),
    chats: chatTabs(status.chats),
  };
}
