import type { LoaderFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { listAllOrders } from '#app/domain/payments/orders.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/order/adminOrderList?user_id&email&page&page_size (admin): data {list, total} (seed 000 §7). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx, _p, services) => {
    const query = Object.fromEntries(new URL(request.url).searchParams);
    return ok(await listAllOrders(ordersCtx(ctx, services), query));
  });
}
