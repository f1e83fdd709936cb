import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { listOwnOrders } from '#app/domain/payments/orders.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/order/getOrderList?page&page_size: the caller's own orders, newest first: data {list, total}. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx, _p, services) => {
    const query = Object.fromEntries(new URL(request.url).searchParams);
    return ok(await listOwnOrders(ordersCtx(ctx, services), query));
  });
}
