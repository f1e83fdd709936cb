/** Order pieces shared by the wallet's bill list, the pay page / dialog and the admin orders page. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { DataTable } from '#app/components/list/data-table.tsx';

/** What the order views need (OrderWire's fields; client-safe). */
export type OrderRow = {
  id: number;
  user_id: number;
  order_id: string;
  email: string;
  product: number;
  money: number;
  order_type: number;
  pay_method: number;
  status: number;
  created_at: number;
};

/** Seed 001 §4: 0 pending, 1 paid, 2 closed, 3 refunded, anything else payment failed. */
export function orderStatusKey(status: number): 'pending' | 'paid' | 'closed' | 'refunded' | 'failed' {
  if (status === 0) return 'pending';
  if (status === 1) return 'paid';
  if (status === 2) return 'closed';
  if (status === 3) return 'refunded';
  return 'failed';
}

/** Unix seconds as 'YYYY-MM-DD HH:mm:ss' UTC (server render and hydration agree). */
export function formatOrderTime(seconds: number): string {
  if (!seconds) return '-';
  return new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

export function OrderStatusTag({ status }: { status: number }) {
  const { t } = useTranslation('wallet');
  const key = orderStatusKey(status);
  return <span className={`tag order-status order-status-${key}`}>{t(`order.status.${key}`)}</span>;
}

export function payMethodName(t: (key: string) => string, method: number): string {
  return method === 1 ? t('pay.alipay') : t('pay.wechat');
}

/** A green check with its text (the seed's "when paid a green check is shown"). */
export function PaidCheck() {
  const { t } = useTranslation('wallet');
  return (
    <p className="order-paid" role="status" data-testid="order-paid">
      <svg viewBox="0 0 24 24" width="48" height="48" aria-hidden="true">
        <circle cx="12" cy="12" r="11" fill="#16a34a" />
        <path d="M7 12.5l3.2 3.2L17 9" fill="none" stroke="#fff" strokeWidth="2.2" strokeLinecap="round" />
      </svg>
      <span>{t('order.paid')}</span>
    </p>
  );
}

/** The order fields of seed 001 §3 (plus user id for admins). */
export function OrdersTable({
  rows,
  admin,
  empty,
}: {
  rows: OrderRow[];
  admin?: boolean;
  empty?: ReactNode;
}) {
  const { t } = useTranslation('wallet');
  return (
    <DataTable
      className="orders-table"
      isEmpty={rows.length === 0}
      empty={empty ?? t('bills.empty')}
      columns={[
        t('bills.orderId'),
        admin ? t('admin.userId') : null,
        t('bills.createdAt'),
        t('bills.email'),
        t('bills.product'),
        t('bills.payMethod'),
        t('bills.status'),
      ]}
    >
      {rows.map((o) => (
        <tr key={o.id} data-order={o.order_id}>
          <td>
            <code>{o.order_id}</code>
          </td>
          {admin ? <td>{o.user_id}</td> : null}
          <td>{formatOrderTime(o.created_at)}</td>
          <td>{o.email || '-'}</td>
          <td>{`$${o.product.toFixed(2)}`}</td>
          <td>{payMethodName(t, o.pay_method)}</td>
          <td>
            <OrderStatusTag status={o.status} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The order page's loader data (also what the pay dialog polls). */
export type OrderPageData = { order: OrderRow & { expires_at: number }; qr: string };

/** The order's QR / status block, shared with the wallet's pay dialog. */
export function OrderPayment({ data }: { data: OrderPageData }) {
  const { t } = useTranslation('wallet');
  const { order, qr } = data;
  return (
    <div className="order-payment" data-testid="order-payment" data-status={order.status}>
      <dl className="wallet-stats">
        <div>
          <dt>{t('order.amount')}</dt>
          <dd>{`$${order.product.toFixed(2)}`}</dd>
        </div>
        <div>
          <dt>{t('order.payable')}</dt>
          <dd data-testid="order-money">{order.money.toFixed(2)}</dd>
        </div>
        <div>
          <dt>{t('order.orderId')}</dt>
          <dd>
            <code>{order.order_id}</code>
          </dd>
        </div>
      </dl>
      {order.status === 1 ? (
        <PaidCheck />
      ) : order.status === 0 ? (
        <>
          <p>{t('order.scan', { method: payMethodName(t, order.pay_method) })}</p>
          {/* qrcode's SVG, generated on the server from the gateway's code_url */}
          <div
            className="order-qr"
            role="img"
            aria-label={t('order.heading')}
            data-testid="order-qr"
            dangerouslySetInnerHTML={{ __html: qr }}
          />
          <p className="wallet-hint">
            {t('order.expires', {
              time: new Date(order.expires_at * 1000).toISOString().replace('T', ' ').slice(0, 16),
            })}{' '}
            UTC
          </p>
          <p aria-live="polite">{t('order.waiting')}</p>
        </>
      ) : (
        <p>
          <OrderStatusTag status={order.status} />
        </p>
      )}
    </div>
  );
}
