import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { getProductConfig } from '#app/domain/payments/orders.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/product/getProductConfig: data {apiAddressList, topupConfig, productConfig (JSON text lists), price,
 * pay_methods} for the token address popover and the wallet (seed 001 §3 Top-up config, §7 Token).
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx, _p, services) =>
    ok(getProductConfig({ options: ctx.options, payments: services.payments })),
  );
}
