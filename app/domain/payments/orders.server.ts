/**
 * Online top-up orders (seed 001 §2.9, §3 Order, §4, §7 Wallet; seed 000 §3 Order, §7 Orders; ADR 027).
 *
 * Money rules, each with a test (tests/integration/payments.test.ts):
 * - an order is paid at most once: the order row is locked (SELECT ... FOR UPDATE) and moves 0 -> 1 in the same
 *   transaction that credits the quota and writes the top-up log row (or creates the redemption code), so
 *   replayed and concurrent notifies credit once;
 * - a payment is accepted only when the gateway's signature verifies, the pay method matches and the amount
 *   equals the order's money to the cent; anything else is refused, changes nothing and is recorded
 *   (audit entry `order.payment.refused`, plus a console warning, both rate-limited: refusals.server.ts);
 * - a pending order closes ORDER_TIMEOUT after creation (PAYMENT_ORDER_TIMEOUT), at the gateway first; a payment
 *   for a closed order is refused.
 */
import { LockMode, raw } from '@mikro-orm/core';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Order, OrderStatus, OrderType, PayMethod } from '@switchyard/db/entities/order.ts';
import { Redemption, RedemptionStatus } from '@switchyard/db/entities/redemption.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import type { TFunction } from 'i18next';
import { z } from 'zod';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { asAuthT } from '#app/domain/auth/i18n.server.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { type MailServices, sendMail } from '#app/domain/mail/mailer.server.ts';
import { generateRedemptionKey, quotaDisplay } from '#app/domain/redemptions/redemptions.server.ts';
import { type RelaySync, syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { parseInput } from '#app/domain/validation.ts';
import { checkTopUpAmount } from '#app/domain/wallet/amount.ts';
import { alipayTrade, createAlipayGateway, verifyAlipayNotify } from './alipay.server.ts';
import {
  alipayConfig,
  DEFAULT_PAYMENT_ENV,
  enabledPayMethods,
  type PaymentEnv,
  wechatPayConfig,
} from './config.server.ts';
import { GatewayError, type GatewayTrade, type PaymentGateway } from './gateway.ts';
import { amountToCents, formatCents, moneyCents, parseCents, quotaForCents } from './money.ts';
import { type RefusalSource, recordRefusal } from './refusals.server.ts';
import { createWeChatPayGateway, openWeChatNotify, wechatTrade } from './wechatpay.server.ts';

export { OrderStatus, OrderType, PayMethod };

/** Unpaid orders one user may hold at once (each one is a trade at the gateway). */
export const MAX_PENDING_ORDERS = 5;
/** A pending order asks the gateway for its state at most this often (the 3 s poll must not flood it). */
export const QUERY_INTERVAL_SECONDS = 10;

export type PaymentDeps = {
  em: RequestCtx['em'];
  options: { get(key: string): unknown };
  t: TFunction;
  payments?: PaymentEnv;
  /** the codes of a card purchase go out through this (SMTP options, or a test transport) */
  mail?: MailServices;
} & RelaySync &
  RefusalSource;

export type OrdersCtx = PaymentDeps & { actor: SessionUser | null; ip?: string };

function env(deps: PaymentDeps): PaymentEnv {
  return deps.payments ?? DEFAULT_PAYMENT_ENV;
}

export function gatewayFor(deps: PaymentDeps, method: PayMethod): PaymentGateway | null {
  if (method === PayMethod.Alipay) {
    const config = alipayConfig(deps.options, env(deps));
    return config ? createAlipayGateway(config) : null;
  }
  const config = wechatPayConfig(deps.options, env(deps));
  return config ? createWeChatPayGateway(config) : null;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** 'SY' + 30 random hex digits (120 bits): fits both gateways' out_trade_no (WeChat: 6..32 characters). */
export function generateOrderId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(15));
  return `SY${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format (seed 000 §3 Order; new-api's names)

export type OrderWire = {
  id: number;
  user_id: number;
  order_id: string;
  email: string;
  /** USD amount */
  product: number;
  /** charged amount in the payment currency */
  money: number;
  quota: number;
  order_type: number;
  pay_method: number;
  status: number;
  trade_no: string;
  created_at: number;
  paid_at: number;
  expires_at: number;
};

export function serializeOrder(o: Order): OrderWire {
  return {
    id: o.id,
    user_id: o.userId,
    order_id: o.orderId,
    email: o.email,
    product: Number(o.productCents) / 100,
    money: Number(o.moneyCents) / 100,
    quota: Number(o.quota),
    order_type: o.orderType,
    pay_method: o.payMethod,
    status: o.status,
    trade_no: o.tradeNo,
    created_at: Number(o.createdAt),
    paid_at: Number(o.paidAt),
    expires_at: Number(o.expiresAt),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Input

const intText = z.union([z.number(), z.string().trim()]).transform((v, c) => {
  const n = typeof v === 'number' ? v : /^-?\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    c.addIssue({ code: 'custom', message: 'integer' });
    return z.NEVER;
  }
  return n;
});
const decimalText = z
  .union([z.number(), z.string()])
  .nullish()
  .transform((v) => (v == null ? '' : String(v).trim()));

export const createOrderSchema = z.object({
  pay_method: intText,
  /** seed 001 §7: the payable amount (amount x Price, two decimals) */
  product: decimalText,
  /** the USD amount itself (the wallet page sends this; either one is enough) */
  amount: decimalText,
  order_type: intText.nullish().transform((v) => v ?? OrderType.Balance),
});

export const orderIdSchema = z.object({ order_id: z.string().trim().max(64) });

export const orderPageSchema = z.object({
  page: z.coerce.number().int().min(1).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
});

export const adminOrderQuerySchema = orderPageSchema.extend({
  user_id: z.coerce.number().int().min(0).max(2_147_483_647).catch(0),
  email: z
    .string()
    .nullish()
    .transform((v) => (v ?? '').trim().slice(0, 255)),
});

function parse<S extends z.ZodType>(ctx: { t: TFunction }, schema: S, value: unknown): z.output<S> {
  return parseInput(ctx.t, schema, value, { ns: 'wallet', messages: 'raw' });
}

function requireActor(ctx: OrdersCtx): SessionUser {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('wallet:errors.unauthorized'));
  return ctx.actor;
}

function price(options: PaymentDeps['options']): number {
  const p = Number(options.get('Price'));
  return Number.isFinite(p) && p > 0 ? p : 0;
}

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

// ---------------------------------------------------------------------------------------------------------------
// Create

export type CreatedOrder = { code_url: string; order_id: string; status: number };

/**
 * GET /api/order/createOrder and the wallet page's pay form: validates the amount (two decimals, > 0, at least
 * MinTopUp; a card purchase must be one of ProductConfig), stores the pending order, asks the gateway for the
 * QR code. The payable `product` of the seed's call must be exactly amount x Price for some cent amount.
 */
export async function createOrder(ctx: OrdersCtx, input: unknown): Promise<CreatedOrder> {
  const actor = requireActor(ctx);
  const q = parse(ctx, createOrderSchema, input);
  const t = ctx.t;
  if (q.pay_method !== PayMethod.Alipay && q.pay_method !== PayMethod.WeChatPay)
    throw new InputError(t('wallet:errors.payMethod'));
  const method = q.pay_method as PayMethod;
  if (!enabledPayMethods(ctx.options, env(ctx)).includes(method))
    throw new InputError(t('wallet:errors.payMethodOff'));
  if (q.order_type < 1 || q.order_type > 32767) throw new InputError(t('wallet:errors.orderType'));
  const rate = price(ctx.options);
  if (rate <= 0) throw new InputError(t('wallet:errors.payMethodOff'));

  // The USD amount in cents: given directly, or derived from the payable amount and checked exactly.
  let productCents: number;
  const minTopUp = Number(ctx.options.get('MinTopUp')) || 1;
  if (q.amount) {
    const check = checkTopUpAmount(q.amount, q.order_type === OrderType.Balance ? minTopUp : 0, rate);
    if (!check.ok)
      throw new InputError(
        check.reason === 'belowMin'
          ? t('wallet:errors.amountBelowMin', { min: `$${minTopUp}` })
          : t('wallet:errors.amountInvalid'),
      );
    productCents = amountToCents(check.amount);
  } else {
    const payable = parseCents(q.product);
    if (payable === null || payable <= 0) throw new InputError(t('wallet:errors.amountInvalid'));
    productCents = Math.round(payable / rate);
    if (productCents <= 0 || moneyCents(productCents, rate) !== payable)
      throw new InputError(t('wallet:errors.amountInvalid'));
    if (q.order_type === OrderType.Balance && productCents < Math.round(minTopUp * 100))
      throw new InputError(t('wallet:errors.amountBelowMin', { min: `$${minTopUp}` }));
  }
  if (q.order_type !== OrderType.Balance) {
    const plans = numberList(ctx.options.get('ProductConfig')).map(amountToCents);
    if (!plans.includes(productCents)) throw new InputError(t('wallet:errors.notAPlan'));
  }
  const money = moneyCents(productCents, rate);
  if (money <= 0) throw new InputError(t('wallet:errors.amountInvalid'));
  const quotaPerUnit = Number(ctx.options.get('QuotaPerUnit')) || 500_000;
  const quota = quotaForCents(productCents, quotaPerUnit);

  const user = await ctx.em.findOne(User, { id: actor.id, deletedAt: null }, { fields: ['email'] });
  if (!user) throw new UnauthorizedError(t('wallet:errors.unauthorized'));
  if (q.order_type !== OrderType.Balance && !user.email) throw new InputError(t('wallet:errors.needEmail'));

  const now = nowSeconds();
  const pending = await ctx.em.count(Order, {
    userId: actor.id,
    status: OrderStatus.Pending,
    expiresAt: { $gt: now },
  });
  if (pending >= MAX_PENDING_ORDERS) throw new InputError(t('wallet:errors.tooManyPending'));

  const order = ctx.em.create(Order, {
    userId: actor.id,
    orderId: generateOrderId(),
    email: user.email,
    productCents,
    moneyCents: money,
    quota,
    orderType: q.order_type,
    payMethod: method,
    status: OrderStatus.Pending,
    createdAt: now,
    expiresAt: now + env(ctx).orderTimeoutSeconds,
  } as never);
  await ctx.em.flush();

  const gateway = gatewayFor(ctx, method);
  let codeUrl: string;
  try {
    if (!gateway) throw new GatewayError('pay method not configured');
    codeUrl = await gateway.precreate({
      orderId: order.orderId,
      moneyCents: money,
      subject: t('wallet:order.subject', { amount: formatCents(productCents) }),
      expiresAt: Number(order.expiresAt),
    });
  } catch (error) {
    console.warn(`[payments] order ${order.orderId} not created at the gateway: ${(error as Error).message}`);
    await ctx.em.nativeUpdate(
      Order,
      { id: order.id, status: OrderStatus.Pending },
      { status: OrderStatus.Closed, closedAt: nowSeconds() },
    );
    throw new InputError(t('wallet:errors.createOrder'));
  }
  await ctx.em.nativeUpdate(Order, { id: order.id }, { codeUrl: codeUrl.slice(0, 512) });
  return { code_url: codeUrl, order_id: order.orderId, status: OrderStatus.Pending };
}

// ---------------------------------------------------------------------------------------------------------------
// Read

/** Last gateway query per order in this process (the poll's fallback is throttled). */
const lastQueried = new Map<string, number>();

/**
 * The signed-in user's own order (another user's is 'not found', whoever asks): when it is still pending, the
 * gateway is asked (at most every QUERY_INTERVAL_SECONDS) in case its notify never arrived, and an expired
 * order is closed.
 */
export async function getOwnOrder(ctx: OrdersCtx, input: unknown): Promise<Order & { codeUrl: string }> {
  const actor = requireActor(ctx);
  const { order_id } = parse(ctx, orderIdSchema, input);
  const found = order_id ? await ctx.em.findOne(Order, { orderId: order_id, userId: actor.id }) : null;
  if (!found) throw new NotFoundError(ctx.t('wallet:errors.orderNotFound'));
  if (found.status === OrderStatus.Pending) {
    const now = nowSeconds();
    const last = lastQueried.get(found.orderId) ?? 0;
    if (now >= Number(found.expiresAt)) {
      await closeOrder(ctx, found);
    } else if (now - last >= QUERY_INTERVAL_SECONDS && now - Number(found.createdAt) >= 3) {
      lastQueried.set(found.orderId, now);
      if (lastQueried.size > 10_000) lastQueried.clear();
      await reconcile(ctx, found);
    }
    return (await ctx.em.fork().findOneOrFail(Order, { id: found.id })) as Order & { codeUrl: string };
  }
  return found as Order & { codeUrl: string };
}

export async function getOrderStatus(ctx: OrdersCtx, input: unknown): Promise<OrderWire> {
  return serializeOrder(await getOwnOrder(ctx, input));
}

export type OrderList = { list: OrderWire[]; total: number; page: number; page_size: number };

export async function listOwnOrders(ctx: OrdersCtx, input: unknown): Promise<OrderList> {
  const actor = requireActor(ctx);
  const q = parse(ctx, orderPageSchema, input);
  const [rows, total] = await ctx.em.findAndCount(
    Order,
    { userId: actor.id },
    { orderBy: { id: 'desc' }, limit: q.page_size, offset: (q.page - 1) * q.page_size },
  );
  return { list: rows.map(serializeOrder), total, page: q.page, page_size: q.page_size };
}

/** GET /api/order/adminOrderList (admin): every order, filtered by user id and e-mail (exact, case-insensitive). */
export async function listAllOrders(ctx: OrdersCtx, input: unknown): Promise<OrderList> {
  const actor = requireActor(ctx);
  if (actor.role < Role.Admin) throw new ForbiddenError(ctx.t('wallet:errors.forbidden'));
  const q = parse(ctx, adminOrderQuerySchema, input);
  const where: Record<string, unknown> = {};
  if (q.user_id > 0) where.userId = q.user_id;
  if (q.email) where.email = { $ilike: q.email.replace(/[\\%_]/g, (c) => `\\${c}`) };
  const [rows, total] = await ctx.em.findAndCount(Order, where, {
    orderBy: { id: 'desc' },
    limit: q.page_size,
    offset: (q.page - 1) * q.page_size,
  });
  return { list: rows.map(serializeOrder), total, page: q.page, page_size: q.page_size };
}

// ---------------------------------------------------------------------------------------------------------------
// Payment

export type PaymentResult =
  | { outcome: 'credited'; order: Order }
  | { outcome: 'duplicate'; order: Order }
  | { outcome: 'refused'; reason: 'unknown_order' | 'method_mismatch' | 'amount_mismatch' | 'closed' };

/**
 * Applies a verified payment: the one transaction of the money rules. Replays and concurrent deliveries wait
 * on the row lock and find the order paid ('duplicate'); nothing is credited twice.
 */
export async function applyPayment(
  deps: PaymentDeps,
  method: PayMethod,
  orderId: string,
  trade: Extract<GatewayTrade, { state: 'paid' }>,
): Promise<PaymentResult> {
  const display = quotaDisplay(deps.options as never);
  const result = await deps.em.fork().transactional(async (tx): Promise<PaymentResult> => {
    const order = await tx.findOne(Order, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!order) return { outcome: 'refused', reason: 'unknown_order' };
    if (order.payMethod !== method) return { outcome: 'refused', reason: 'method_mismatch' };
    if (order.status === OrderStatus.Paid) return { outcome: 'duplicate', order };
    if (order.status !== OrderStatus.Pending) return { outcome: 'refused', reason: 'closed' };
    if (trade.amountCents !== Number(order.moneyCents))
      return { outcome: 'refused', reason: 'amount_mismatch' };
    const now = nowSeconds();
    order.status = OrderStatus.Paid;
    order.tradeNo = trade.tradeNo.slice(0, 128);
    order.paidAt = trade.paidAt || now;
    const quota = Number(order.quota);
    const user = await tx.findOne(User, { id: order.userId }, { fields: ['username', 'group'] });
    if (order.orderType === OrderType.Balance) {
      const credited = await tx.nativeUpdate(
        User,
        { id: order.userId },
        { quota: raw('quota + ?', [quota]) },
      );
      if (credited !== 1) throw new Error(`order ${order.orderId}: user ${order.userId} is gone`);
      tx.create(Log, {
        userId: order.userId,
        username: user?.username ?? '',
        type: LogType.TopUp,
        quota,
        group: user?.group ?? '',
        content: deps.t('wallet:log.paid', {
          amount: formatQuota(quota, display),
          money: formatCents(Number(order.moneyCents)),
          method: deps.t(method === PayMethod.Alipay ? 'wallet:pay.alipay' : 'wallet:pay.wechat'),
          order: order.orderId,
        }),
      } as never);
    } else {
      tx.create(Redemption, {
        userId: order.userId,
        key: generateRedemptionKey(),
        status: RedemptionStatus.Unused,
        name: `order-${order.id}`,
        quota,
      } as never);
      tx.create(Log, {
        userId: order.userId,
        username: user?.username ?? '',
        type: LogType.System,
        quota: 0,
        group: user?.group ?? '',
        content: deps.t('wallet:log.cardPaid', {
          amount: formatQuota(quota, display),
          money: formatCents(Number(order.moneyCents)),
          order: order.orderId,
        }),
      } as never);
    }
    await tx.flush();
    return { outcome: 'credited', order };
  });
  if (result.outcome === 'refused') {
    await recordRefusal(deps, method, orderId, result.reason, {
      pay_method: method,
      amount_cents: trade.amountCents,
      trade_no: trade.tradeNo.slice(0, 64),
    });
    return result;
  }
  if (result.outcome === 'credited') {
    if (result.order.orderType === OrderType.Balance)
      await syncRelayAccounts(deps, { userIds: [result.order.userId] });
    else await mailCardCodes(deps, result.order.id);
  }
  return result;
}

/**
 * E-mails the codes of a paid card purchase, once: the order's mailed_at is claimed before sending (a
 * concurrent caller finds it taken) and released when the mail fails, so the sweeper tries again.
 */
export async function mailCardCodes(deps: PaymentDeps, id: number): Promise<boolean> {
  const em = deps.em.fork();
  const claimed = await em.nativeUpdate(
    Order,
    { id, status: OrderStatus.Paid, mailedAt: 0, orderType: { $ne: OrderType.Balance } },
    { mailedAt: nowSeconds() },
  );
  if (claimed !== 1) return false;
  const order = await em.findOneOrFail(Order, { id });
  const codes = await em.find(Redemption, { name: `order-${order.id}` }, { orderBy: { id: 'asc' } });
  const display = quotaDisplay(deps.options as never);
  try {
    if (!deps.mail) throw new Error('no mail service');
    const lines = codes.map((c) => `${c.key}  (${formatQuota(Number(c.quota), display)})`);
    await sendMail(
      deps.mail,
      {
        to: order.email,
        subject: deps.t('wallet:mail.subject', { order: order.orderId }),
        text: `${deps.t('wallet:mail.intro', { amount: formatCents(Number(order.productCents)) })}\n\n${lines.join('\n')}\n`,
        html: `<p>${deps.t('wallet:mail.intro', { amount: formatCents(Number(order.productCents)) })}</p><ul>${codes
          .map((c) => `<li><code>${c.key}</code></li>`)
          .join('')}</ul>`,
      },
      asAuthT(deps.t),
    );
    return true;
  } catch (error) {
    console.warn(`[payments] codes of order ${order.orderId} not mailed: ${(error as Error).message}`);
    await em.nativeUpdate(Order, { id }, { mailedAt: 0 });
    return false;
  }
}

/** Asks the gateway about a pending order and applies what it says (the fallback when no notify arrives). */
export async function reconcile(deps: PaymentDeps, order: Order): Promise<GatewayTrade | null> {
  const gateway = gatewayFor(deps, order.payMethod as PayMethod);
  if (!gateway) return null;
  try {
    const trade = await gateway.query(order.orderId);
    if (trade.state === 'paid') await applyPayment(deps, order.payMethod as PayMethod, order.orderId, trade);
    return trade;
  } catch (error) {
    console.warn(`[payments] query of order ${order.orderId} failed: ${(error as Error).message}`);
    return null;
  }
}

/**
 * Closes a pending order: the gateway is asked first (a payment that arrived is applied instead), then the
 * trade is closed there, then here. Gateway failures leave the order pending for the next sweep.
 */
export async function closeOrder(deps: PaymentDeps, order: Order): Promise<number> {
  const gateway = gatewayFor(deps, order.payMethod as PayMethod);
  if (gateway) {
    const trade = await reconcile(deps, order);
    if (trade === null) return order.status;
    if (trade.state === 'paid') return OrderStatus.Paid;
    if (trade.state === 'pending') {
      try {
        await gateway.close(order.orderId);
      } catch (error) {
        console.warn(`[payments] close of order ${order.orderId} failed: ${(error as Error).message}`);
        return OrderStatus.Pending;
      }
    }
  }
  await deps.em
    .fork()
    .nativeUpdate(
      Order,
      { id: order.id, status: OrderStatus.Pending },
      { status: OrderStatus.Closed, closedAt: nowSeconds() },
    );
  return OrderStatus.Closed;
}

/** The sweeper: closes expired pending orders, re-sends card codes whose mail failed. */
export async function sweepOrders(
  deps: PaymentDeps,
  limit = 50,
): Promise<{ closed: number; mailed: number }> {
  const em = deps.em.fork();
  const expired = await em.find(
    Order,
    { status: OrderStatus.Pending, expiresAt: { $lte: nowSeconds() } },
    { orderBy: { id: 'asc' }, limit },
  );
  let closed = 0;
  for (const order of expired) if ((await closeOrder(deps, order)) === OrderStatus.Closed) closed += 1;
  const unmailed = await em.find(
    Order,
    { status: OrderStatus.Paid, mailedAt: 0, orderType: { $ne: OrderType.Balance } },
    { orderBy: { id: 'asc' }, limit },
  );
  let mailed = 0;
  for (const order of unmailed) if (await mailCardCodes(deps, order.id)) mailed += 1;
  return { closed, mailed };
}

/** Runs the sweeper every minute; returns a stop function. */
export function scheduleOrderSweep(deps: () => PaymentDeps, everyMs = 60_000): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepOrders(deps())
      .catch((error) => console.error('[payments] sweep failed', error))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

// ---------------------------------------------------------------------------------------------------------------
// Notifies

/**
 * Alipay's asynchronous notify (form fields). Answers the body Alipay expects: 'success' once handled (paid
 * now, paid before, or a state that needs nothing), 'fail' when refused (Alipay retries; refusals are logged).
 */
export async function handleAlipayNotify(
  deps: PaymentDeps,
  params: Record<string, string>,
): Promise<'success' | 'fail'> {
  const config = alipayConfig(deps.options, env(deps));
  const orderId = String(params.out_trade_no ?? '');
  if (!config || !verifyAlipayNotify(config, params)) {
    await recordRefusal(deps, PayMethod.Alipay, orderId, 'bad_signature', { pay_method: PayMethod.Alipay });
    return 'fail';
  }
  if (params.app_id !== config.appId) {
    await recordRefusal(deps, PayMethod.Alipay, orderId, 'app_id_mismatch', {
      app_id: String(params.app_id).slice(0, 64),
    });
    return 'fail';
  }
  let trade: GatewayTrade;
  try {
    trade = alipayTrade(params);
  } catch {
    await recordRefusal(deps, PayMethod.Alipay, orderId, 'bad_amount', {
      total_amount: String(params.total_amount).slice(0, 32),
    });
    return 'fail';
  }
  if (trade.state !== 'paid') return 'success';
  const result = await applyPayment(deps, PayMethod.Alipay, orderId, trade);
  return result.outcome === 'refused' ? 'fail' : 'success';
}

/**
 * WeChat Pay's notify: the signature over the raw body, then the AES-256-GCM resource. Answers 204 when
 * handled, 4xx {code: 'FAIL', message} when refused (WeChat Pay retries).
 */
export async function handleWeChatNotify(
  deps: PaymentDeps,
  headers: Headers,
  body: string,
): Promise<{ ok: true } | { ok: false; status: number; message: string }> {
  const config = wechatPayConfig(deps.options, env(deps));
  const opened = config ? openWeChatNotify(config, headers, body) : null;
  if (!config || !opened) {
    await recordRefusal(deps, PayMethod.WeChatPay, '', 'bad_signature', { pay_method: PayMethod.WeChatPay });
    return { ok: false, status: 401, message: 'signature verification failed' };
  }
  const tx = opened.transaction;
  const orderId = String(tx.out_trade_no ?? '');
  if (tx.mchid !== config.mchId || tx.appid !== config.appId) {
    await recordRefusal(deps, PayMethod.WeChatPay, orderId, 'merchant_mismatch', {
      mchid: String(tx.mchid).slice(0, 32),
    });
    return { ok: false, status: 400, message: 'merchant mismatch' };
  }
  let trade: GatewayTrade;
  try {
    trade = wechatTrade(tx);
  } catch {
    await recordRefusal(deps, PayMethod.WeChatPay, orderId, 'bad_amount', {});
    return { ok: false, status: 400, message: 'bad amount' };
  }
  if (trade.state !== 'paid') return { ok: true };
  const result = await applyPayment(deps, PayMethod.WeChatPay, orderId, trade);
  return result.outcome === 'refused' ? { ok: false, status: 400, message: result.reason } : { ok: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Product config

export type ProductConfig = {
  /** JSON text of the address list (token page popover) */
  apiAddressList: string;
  /** JSON text: preset USD amounts of the balance top-up */
  topupConfig: string;
  /** JSON text: USD amounts of the card plans */
  productConfig: string;
  /** payment currency per USD */
  price: number;
  /** pay methods that can be used now (1 Alipay, 2 WeChat Pay) */
  pay_methods: number[];
};

export function getProductConfig(deps: Pick<PaymentDeps, 'options' | 'payments'>): ProductConfig {
  const addresses = deps.options.get('apiAddressList');
  return {
    apiAddressList: typeof addresses === 'string' ? addresses : JSON.stringify(addresses ?? []),
    topupConfig: JSON.stringify(numberList(deps.options.get('TopupConfig'))),
    productConfig: JSON.stringify(numberList(deps.options.get('ProductConfig'))),
    price: price(deps.options),
    pay_methods: enabledPayMethods(deps.options, deps.payments ?? DEFAULT_PAYMENT_ENV),
  };
}
