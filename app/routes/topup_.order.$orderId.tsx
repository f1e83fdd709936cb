import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Link, useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { OrderPayment } from '#app/domain/payments/order-ui.tsx';
import { getOwnOrder, OrderStatus, serializeOrder } from '#app/domain/payments/orders.server.ts';
import { qrSvg } from '#app/domain/payments/qr.server.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: ['common', 'wallet'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Order' }];

/**
 * GET /topup/order/:orderId: the signed-in user's own order. While it is pending: the QR code (server-rendered
 * SVG) and a refresh link, which is how the page works without JavaScript; each load asks the gateway when no
 * notify has arrived. With JavaScript the wallet's pay dialog loads this same loader every 3 s.
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  let order: Awaited<ReturnType<typeof getOwnOrder>>;
  try {
    order = await getOwnOrder(ordersCtx(ctx, getServices(context)), { order_id: params.orderId ?? '' });
  } catch (error) {
    // another user's order, or none: the same 404 either way
    if (isDomainError(error) && error.status < 500) throw data(null, { status: 404 });
    throw error;
  }
  const pending = order.status === OrderStatus.Pending;
  return {
    title: ctx.t('wallet:order.heading'),
    order: serializeOrder(order),
    qr: pending && order.codeUrl ? await qrSvg(order.codeUrl) : '',
  };
}

export default function OrderPage() {
  const data = useLoaderData<typeof loader>();
  const { t } = useTranslation('wallet');
  return (
    <div className="page wallet-page">
      <h1>{t('order.heading')}</h1>
      <section className="wallet-card">
        <OrderPayment data={data} />
        <p className="order-links">
          {data.order.status === 0 ? (
            <Link to={`/topup/order/${data.order.order_id}`} reloadDocument data-testid="order-refresh">
              {t('order.refresh')}
            </Link>
          ) : null}{' '}
          <Link to="/topup">{t('order.back')}</Link>
        </p>
      </section>
    </div>
  );
}
