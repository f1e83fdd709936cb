import type { ActionFunctionArgs } from '@remix-run/node';
import { notifyDeps } from '#app/domain/payments/http.server.ts';
import { handleAlipayNotify } from '#app/domain/payments/orders.server.ts';

/**
 * POST /api/payment/alipay/notify (the AlipayNotifyUrl to configure): Alipay's asynchronous notify, a form.
 * Answers the plain text Alipay expects: `success` when handled, `fail` when refused (Alipay then retries).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const text = (body: string, status = 200) =>
    new Response(body, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  if (request.method !== 'POST') return text('fail', 405);
  let params: Record<string, string>;
  try {
    const body = await request.text();
    params = Object.fromEntries(new URLSearchParams(body.slice(0, 64 * 1024)));
  } catch {
    return text('fail', 400);
  }
  return text(await handleAlipayNotify(notifyDeps(context, request), params));
}

export function loader() {
  return new Response('fail', { status: 405, headers: { Allow: 'POST' } });
}
