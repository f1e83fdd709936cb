import { User } from '@switchyard/db/entities/user.ts';
import type { QuotaDisplay } from '#app/domain/account/quota-format.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { UnauthorizedError } from '#app/domain/errors.ts';
import { quotaDisplay } from '#app/domain/redemptions/redemptions.server.ts';
import { getPublicStatus } from '#app/domain/status/status.server.ts';

/**
 * The wallet page's read side (seed 001 §2.9): the signed-in user's balance, used quota and request count read
 * fresh from the database (the session copy may be stale right after a redeem), and the top-up settings the
 * page needs. Redeeming itself is redeemCode (app/domain/redemptions), shared with POST /api/user/topup.
 */
export type WalletCtx = Pick<RequestCtx, 'em' | 'actor' | 't' | 'options'>;

export type WalletSummary = {
  quota: number;
  used_quota: number;
  request_count: number;
  display: QuotaDisplay;
  /** where codes can be bought (TopUpLink); '' hides the link */
  top_up_link: string;
  online: {
    /** the status object's enable_online_topup: a pay method (Alipay or WeChat Pay) is configured */
    enabled: boolean;
    min_topup: number;
    /** payment currency per USD of quota */
    price: number;
    /** preset amounts (TopupConfig) */
    amounts: number[];
  };
};

function numberList(value: unknown): number[] {
  let list = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value);
    } catch {
      return [];
    }
  }
  return Array.isArray(list) ? list.filter((n): n is number => typeof n === 'number' && n > 0) : [];
}

export async function getWalletSummary(ctx: WalletCtx): Promise<WalletSummary> {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('wallet:errors.unauthorized'));
  const user = await ctx.em.findOne(
    User,
    { id: ctx.actor.id, deletedAt: null },
    { fields: ['quota', 'usedQuota', 'requestCount'] },
  );
  if (!user) throw new UnauthorizedError(ctx.t('wallet:errors.unauthorized'));
  const status = getPublicStatus({ options: ctx.options, version: '', startedAt: 0 });
  const price = Number(ctx.options.get('Price'));
  return {
    quota: Number(user.quota),
    used_quota: Number(user.usedQuota),
    request_count: Number(user.requestCount),
    display: quotaDisplay(ctx.options),
    top_up_link: safeLink(status.top_up_link),
    online: {
      enabled: status.enable_online_topup,
      min_topup: status.min_topup,
      price: Number.isFinite(price) && price >= 0 ? price : 0,
      amounts: numberList(ctx.options.get('TopupConfig')),
    },
  };
}

/** Only http(s) links are rendered: the option is admin text and ends up in an href. */
function safeLink(link: string): string {
  const text = link.trim();
  return /^https?:\/\//i.test(text) ? text : '';
}
