import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** orders.status (seed 001 §4). Anything else is shown as payment failed. */
export const OrderStatus = { Pending: 0, Paid: 1, Closed: 2, Refunded: 3 } as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** orders.order_type: 1 balance top-up, otherwise redeem-card purchase. */
export const OrderType = { Balance: 1, Card: 2 } as const;
/** orders.pay_method */
export const PayMethod = { Alipay: 1, WeChatPay: 2 } as const;
export type PayMethod = (typeof PayMethod)[keyof typeof PayMethod];

/**
 * A paid top-up (seed 000 §3 Order, seed 001 §3 Order). Every amount is an integer (ADR 027): the product in US
 * cents, the charged money in the payment currency's cents (fen), the quota credited.
 */
export const OrderSchema = defineEntity({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: p.integer().primary().autoincrement(),
    userId: p.integer().index('orders_user_id_index'),
    /** merchant order number (out_trade_no): 'SY' + 30 random hex digits, unguessable */
    orderId: p.string().length(64).unique('orders_order_id_unique'),
    email: p.string().length(255).default(''),
    /** the product: amount in US cents (the wire `product` is this / 100) */
    productCents: p.bigint('number').default(0),
    /** amount charged in the payment currency (CNY fen): product x Price, rounded to the cent */
    moneyCents: p.bigint('number').default(0),
    /** quota credited (balance top-up) or put on the redemption code (card purchase) when paid */
    quota: p.bigint('number').default(0),
    orderType: p.smallint().default(OrderType.Balance),
    payMethod: p.smallint().default(PayMethod.Alipay),
    status: p.smallint().default(OrderStatus.Pending).index('orders_status_index'),
    /** the QR content the gateway answered (shown again while the order is pending) */
    codeUrl: p.string().length(512).default(''),
    /** payment provider's transaction id */
    tradeNo: p.string().length(128).default(''),
    /** unix seconds */
    createdAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix seconds; 0 unpaid */
    paidAt: p.bigint('number').default(0),
    /** unix seconds after which a pending order is closed (here and at the gateway) */
    expiresAt: p.bigint('number').default(0),
    /** unix seconds; 0 not closed */
    closedAt: p.bigint('number').default(0),
    /** card purchase: unix seconds the codes were e-mailed (claimed before sending, so they go out once) */
    mailedAt: p.bigint('number').default(0),
  },
});

export class Order extends OrderSchema.class {}
OrderSchema.setClass(Order);
