import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useLocation, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { enforceRedeemLimit } from '#app/domain/redemptions/http.server.ts';
import { quotaDisplay, redeemCode } from '#app/domain/redemptions/redemptions.server.ts';
import { FormError } from '#app/domain/users/user-ui.tsx';
import { checkTopUpAmount } from '#app/domain/wallet/amount.ts';
import { getWalletSummary } from '#app/domain/wallet/wallet.server.ts';
import { getServices } from '#app/services.server.ts';
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
  return { title: ctx.t('wallet:title'), summary, amount };
}

export type TopupReply = { error: string; key: string };

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

export default function TopupPage() {
  const { summary, amount } = useLoaderData<typeof loader>();
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
            <p className="notice">{t('online.unavailable')}</p>
          </>
        ) : (
          <p className="notice">{t('online.disabled')}</p>
        )}
      </section>
    </div>
  );
}
