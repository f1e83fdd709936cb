import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { createOrder } from '#app/domain/payments/orders.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/order/createOrder?pay_method=1|2&product={payable, 2 decimals}&order_type=1 (or amount={USD}):
 * data {code_url, order_id, status} (seed 001 §7 Wallet).
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx, _p, services) => {
    const query = Object.fromEntries(new URL(request.url).searchParams);
    return ok(await createOrder(ordersCtx(ctx, services), query));
  });
}
