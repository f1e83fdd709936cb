import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { getOrderStatus } from '#app/domain/payments/orders.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/order/getOrderStatus?order_id=: data is the caller's own order ({status, ...}). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx, _p, services) => {
    const query = Object.fromEntries(new URL(request.url).searchParams);
    return ok(await getOrderStatus(ordersCtx(ctx, services), { order_id: query.order_id ?? '' }));
  });
}
