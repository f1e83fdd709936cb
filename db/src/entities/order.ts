import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** orders.status (seed 001 §4). Anything else is shown as payment failed. */
export const OrderStatus = { Pending: 0, Paid: 1, Closed: 2, Refunded: 3 } as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** orders.order_type: 1 balance top-up, otherwise redeem-card purchase. */
export const OrderType = { Balance: 1, Card: 2 } as const;
/** orders.pay_method */
export const PayMethod = { Alipay: 1, WeChatPay: 2 } as const;

export const OrderSchema = defineEntity({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: p.integer().primary().autoincrement(),
    userId: p.integer().index('orders_user_id_index'),
    /** merchant order number shown to the user and sent to the payment provider */
    orderId: p.string().length(64).unique('orders_order_id_unique'),
    email: p.string().length(255).default(''),
    /** amount in USD (2 decimals) */
    product: p.decimal('number').precision(12).scale(2).default(0),
    /** amount actually charged in the payment currency (product x Price) */
    money: p.decimal('number').precision(12).scale(2).default(0),
    /** quota credited when paid */
    quota: p.bigint('number').default(0),
    orderType: p.smallint().default(OrderType.Balance),
    payMethod: p.smallint().default(PayMethod.Alipay),
    status: p.smallint().default(OrderStatus.Pending).index('orders_status_index'),
    /** payment provider's transaction id */
    tradeNo: p.string().length(128).default(''),
    /** unix seconds */
    createdAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix seconds; 0 unpaid */
    paidAt: p.bigint('number').default(0),
  },
});

export class Order extends OrderSchema.class {}
OrderSchema.setClass(Order);
