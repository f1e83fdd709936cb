import {
  type ActionFunctionArgs,
  data,
  type LoaderFunctionArgs,
  type MetaFunction,
  redirect,
} from '@remix-run/node';
import {
  Form,
  Link,
  useActionData,
  useFetcher,
  useLoaderData,
  useLocation,
  useNavigation,
  useRevalidator,
} from '@remix-run/react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { BillsDialog, PayDialog } from '#app/components/wallet/pay-dialog.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { enabledPayMethods } from '#app/domain/payments/config.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { type OrderPageData, OrdersTable } from '#app/domain/payments/order-ui.tsx';
import {
  createOrder,
  getOwnOrder,
  listOwnOrders,
  serializeOrder,
} from '#app/domain/payments/orders.server.ts';
import { qrSvg } from '#app/domain/payments/qr.server.ts';
import { enforceRedeemLimit } from '#app/domain/redemptions/http.server.ts';
import { quotaDisplay, redeemCode } from '#app/domain/redemptions/redemptions.server.ts';
import { FormError } from '#app/domain/users/user-ui.tsx';
import { checkTopUpAmount } from '#app/domain/wallet/amount.ts';
import { getWalletSummary } from '#app/domain/wallet/wallet.server.ts';
import { getServices } from '#app/services.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'wallet'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Wallet' }];

/**
 * GET /topup (seed 001 §2.9): balance, used quota and request count; the redemption-code box; the online
 * top-up section. `?amount=` is the online section's GET form (preset or custom amount -> payable amount), so
 * it works without JavaScript too.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const summary = await getWalletSummary(ctx);
  // a preset button and the custom field share the name `amount`: the first filled one wins
  const raw = new URL(request.url).searchParams.getAll('amount').find((v) => v.trim() !== '') ?? null;
  let amount: { raw: string; payable: string | null; error: 'invalid' | 'belowMin' | null } | null = null;
  if (summary.online.enabled && raw !== null) {
    const check = checkTopUpAmount(raw, summary.online.min_topup, summary.online.price);
    amount = {
      raw: raw.slice(0, 32),
      payable: check.ok ? check.payable : null,
      error: check.ok ? null : check.reason,
    };
  }
  const services = getServices(context);
  const payMethods = summary.online.enabled ? enabledPayMethods(ctx.options, services.payments) : [];
  // ?dialog=bills&p=N: the bill list (own orders, newest first), rendered by the server so it works without JS
  const search = new URL(request.url).searchParams;
  let bills: {
    list: ReturnType<typeof serializeOrder>[];
    total: number;
    page: number;
    pages: number;
  } | null = null;
  let billsError = '';
  if (search.get('dialog') === 'bills') {
    try {
      const result = await listOwnOrders(ordersCtx(ctx, services), {
        page: search.get('p') ?? '1',
        page_size: 10,
      });
      bills = { ...result, pages: Math.max(1, Math.ceil(result.total / 10)) };
    } catch (error) {
      console.error(error);
      billsError = ctx.t('wallet:errors.orderList');
    }
  }
  return { title: ctx.t('wallet:title'), summary, amount, payMethods, bills, billsError };
}

export type TopupReply = { error: string; key: string; payError?: string; paid?: OrderPageData };

/**
 * POST /topup intent=redeem {key}: the redeem limits and redeemCode, exactly what POST /api/user/topup runs
 * (one credit per code however many redeem it at once; the top-up log row; the relay told to reload the
 * balance). Success -> redirect back with a flash toast (PRG, so a reload never re-posts); a refusal answers
 * the page with the message next to the box and the typed code kept.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const form = await request.formData();
  const key = String(form.get('key') ?? '').slice(0, 64);
  if (form.get('intent') === 'pay') return pay(ctx, context, form);
  if (form.get('intent') !== 'redeem')
    return data<TopupReply>({ error: ctx.t('wallet:errors.unknownIntent'), key }, { status: 400 });
  let quota: number;
  try {
    await enforceRedeemLimit(request, getServices(context), ctx);
    quota = await redeemCode(ctx, { key });
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data<TopupReply>({ error: error.message, key }, { status: error.status === 429 ? 429 : 400 });
    throw error;
  }
  return redirectWithToast('/topup', {
    type: 'success',
    message: ctx.t('wallet:toast.redeemed', { amount: formatQuota(quota, quotaDisplay(ctx.options)) }),
  });
}

/**
 * POST /topup intent=pay {amount, pay_method}: createOrder (the same function as GET /api/order/createOrder).
 * Without JavaScript the answer redirects to the order page (QR code + refresh link); the enhanced form
 * (js=1) gets the order page's data back and opens the pay dialog in place.
 */
async function pay(
  ctx: Awaited<ReturnType<typeof domainPageCtx>>,
  context: ActionFunctionArgs['context'],
  form: FormData,
) {
  const octx = ordersCtx(ctx, getServices(context));
  let orderId: string;
  try {
    const created = await createOrder(octx, {
      amount: String(form.get('amount') ?? '').slice(0, 32),
      pay_method: String(form.get('pay_method') ?? ''),
      order_type: 1,
    });
    orderId = created.order_id;
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data<TopupReply>({ error: '', key: '', payError: error.message }, { status: 400 });
    throw error;
  }
  if (form.get('js') !== '1') return redirect(`/topup/order/${orderId}`);
  const order = await getOwnOrder(octx, { order_id: orderId });
  const paid: OrderPageData = {
    order: serializeOrder(order),
    qr: order.codeUrl ? await qrSvg(order.codeUrl) : '',
  };
  return data<TopupReply>({ error: '', key: '', paid });
}

export default function TopupPage() {
  const { summary, amount, payMethods, bills, billsError } = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const { t } = useTranslation('wallet');
  const navigation = useNavigation();
  const location = useLocation();
  const redeeming = navigation.state !== 'idle' && navigation.formData?.get('intent') === 'redeem';
  const { display, online } = summary;
  return (
    <div className="page wallet-page">
      <h1>{t('title')}</h1>

      <section className="wallet-card" aria-labelledby="wallet-balance-heading">
        <h2 id="wallet-balance-heading">{t('balance.heading')}</h2>
        <dl className="wallet-stats">
          <div>
            <dt>{t('balance.current')}</dt>
            <dd data-testid="wallet-balance">{formatQuota(summary.quota, display)}</dd>
          </div>
          <div>
            <dt>{t('balance.used')}</dt>
            <dd data-testid="wallet-used">{formatQuota(summary.used_quota, display)}</dd>
          </div>
          <div>
            <dt>{t('balance.requests')}</dt>
            <dd data-testid="wallet-requests">{summary.request_count}</dd>
          </div>
        </dl>
      </section>

      <section className="wallet-card" aria-labelledby="wallet-redeem-heading">
        <h2 id="wallet-redeem-heading">{t('redeem.heading')}</h2>
        {/* keyed by location: a successful redeem redirects here and the box comes back empty */}
        <Form method="post" className="wallet-redeem" key={location.key}>
          <input type="hidden" name="intent" value="redeem" />
          <label htmlFor="wallet-key">{t('redeem.label')}</label>
          <div className="wallet-redeem-row">
            <input
              id="wallet-key"
              name="key"
              className="wallet-input"
              autoComplete="off"
              spellCheck={false}
              maxLength={64}
              placeholder={t('redeem.placeholder')}
              defaultValue={reply?.key ?? ''}
              aria-invalid={reply?.error ? true : undefined}
              aria-describedby={reply?.error ? 'wallet-redeem-error' : undefined}
            />
            <Button type="submit" variant="primary" isDisabled={redeeming}>
              {redeeming ? t('redeem.submitting') : t('redeem.submit')}
            </Button>
          </div>
        </Form>
        <div id="wallet-redeem-error">
          <FormError message={reply?.error} />
        </div>
        {summary.top_up_link ? (
          <p className="wallet-hint">
            {t('redeem.buyHint')}{' '}
            <a href={summary.top_up_link} target="_blank" rel="noopener noreferrer">
              {t('redeem.buy')}
            </a>
          </p>
        ) : null}
      </section>

      <section className="wallet-card" aria-labelledby="wallet-online-heading" data-testid="wallet-online">
        <h2 id="wallet-online-heading">{t('online.heading')}</h2>
        <p>
          <Link to="/topup?dialog=bills" preventScrollReset data-testid="wallet-bills-link">
            {t('online.bills')}
          </Link>
        </p>
        {online.enabled ? (
          <>
            <Form method="get" className="wallet-online">
              {online.amounts.length > 0 ? (
                <fieldset className="wallet-presets">
                  <legend>{t('online.presets')}</legend>
                  {online.amounts.map((n) => (
                    <button
                      key={n}
                      type="submit"
                      name="amount"
                      value={String(n)}
                      className="btn btn-secondary"
                    >
                      {`$${n}`}
                    </button>
                  ))}
                </fieldset>
              ) : null}
              <label htmlFor="wallet-amount">{t('online.amount')}</label>
              <div className="wallet-redeem-row">
                <input
                  id="wallet-amount"
                  name="amount"
                  className="wallet-input"
                  inputMode="decimal"
                  defaultValue={amount?.raw ?? ''}
                  aria-describedby="wallet-amount-min"
                />
                <Button type="submit">{t('online.calculate')}</Button>
              </div>
              <p id="wallet-amount-min" className="wallet-hint">
                {t('online.min', { min: `$${online.min_topup}` })}
              </p>
            </Form>
            <div aria-live="polite">
              {amount?.payable ? (
                <p data-testid="wallet-payable">{t('online.payable', { payable: amount.payable })}</p>
              ) : amount?.error ? (
                <FormError
                  message={
                    amount.error === 'belowMin'
                      ? t('errors.amountBelowMin', { min: `$${online.min_topup}` })
                      : t('errors.amountInvalid')
                  }
                />
              ) : null}
            </div>
            {amount?.payable && payMethods.length > 0 ? (
              <PayForm amount={amount.raw} methods={payMethods} />
            ) : null}
            {payMethods.length === 0 ? <p className="notice">{t('online.unavailable')}</p> : null}
          </>
        ) : (
          <p className="notice">{t('online.disabled')}</p>
        )}
      </section>

      {bills || billsError ? (
        <BillsDialog closeTo="/topup">
          {billsError ? (
            <p role="alert">{billsError}</p>
          ) : bills ? (
            <>
              <OrdersTable rows={bills.list} />
              <Pagination page={bills.page} pages={bills.pages} total={bills.total} />
            </>
          ) : null}
        </BillsDialog>
      ) : null}
    </div>
  );
}

/**
 * The pay buttons for the computed amount. Without JavaScript a plain POST (-> the order page); with it a
 * fetcher whose answer opens the pay dialog; closing it refreshes the balance.
 */
function PayForm({ amount, methods }: { amount: string; methods: number[] }) {
  const { t } = useTranslation('wallet');
  const hydrated = useHydrated();
  const fetcher = useFetcher<typeof action>();
  const revalidator = useRevalidator();
  const [closed, setClosed] = useState<string | null>(null);
  const reply = fetcher.data as TopupReply | undefined;
  const actionReply = useActionData<typeof action>() as TopupReply | undefined;
  const payError = reply?.payError ?? actionReply?.payError;
  const busy = fetcher.state !== 'idle';
  const open = reply?.paid && reply.paid.order.order_id !== closed ? reply.paid : null;
  return (
    <>
      <fetcher.Form method="post" className="wallet-pay-methods" aria-label={t('online.payWith')}>
        <input type="hidden" name="intent" value="pay" />
        <input type="hidden" name="amount" value={amount} />
        {hydrated ? <input type="hidden" name="js" value="1" /> : null}
        <span>{t('online.payWith')}</span>
        {methods.map((m) => (
          <button
            key={m}
            type="submit"
            name="pay_method"
            value={String(m)}
            className="btn btn-primary"
            disabled={busy}
            data-testid={`pay-${m}`}
          >
            {m === 1 ? t('online.payAlipay') : t('online.payWechat')}
          </button>
        ))}
      </fetcher.Form>
      <div aria-live="polite">{payError ? <FormError message={payError} /> : null}</div>
      {open ? (
        <PayDialog
          initial={open}
          onClose={() => {
            setClosed(open.order.order_id);
            revalidator.revalidate();
          }}
        />
      ) : null}
    </>
  );
}
