import type { ActionFunctionArgs } from '@remix-run/node';
import { notifyDeps } from '#app/domain/payments/http.server.ts';
import { handleWeChatNotify } from '#app/domain/payments/orders.server.ts';

/**
 * POST /api/payment/wechatpay/notify (the WeChatPayNotifyUrl to configure): WeChat Pay's notify, JSON with an
 * encrypted resource. 204 when handled; 4xx {code: FAIL, message} when refused (WeChat Pay then retries).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  if (request.method !== 'POST') return new Response(null, { status: 405, headers: { Allow: 'POST' } });
  const body = (await request.text()).slice(0, 64 * 1024);
  const result = await handleWeChatNotify(notifyDeps(context, request), request.headers, body);
  if (result.ok) return new Response(null, { status: 204 });
  return new Response(JSON.stringify({ code: 'FAIL', message: result.message }), {
    status: result.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
  });
}

export function loader() {
  return new Response(null, { status: 405, headers: { Allow: 'POST' } });
}
