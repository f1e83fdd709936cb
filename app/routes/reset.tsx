import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from '@remix-run/node';
import { useActionData, useFetcher, useRouteLoaderData } from '@remix-run/react';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { accountT } from '#app/components/auth/account-t.server.ts';
import { errorReply, type FormReply, field, reply } from '#app/components/auth/action.server.ts';
import authStyles from '#app/components/auth/auth.css?url';
import {
  Field,
  FormAlert,
  hasTurnstileToken,
  TurnstileWidget,
  useCountdown,
} from '#app/components/auth/fields.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { requestPasswordReset } from '#app/domain/auth/password-reset.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import type { RootLoaderData } from '#app/root.tsx';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: 'account' };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: authStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Reset' }];

/** Seed 001 §4 / §9: the submit button is locked for 30 seconds after a click. */
export const RESET_COOLDOWN_SECONDS = 30;

export async function loader({ request }: LoaderFunctionArgs) {
  const t = await accountT(request);
  return data({ title: t('reset.title') });
}

/**
 * POST /reset: mails the reset link (A's requestPasswordReset, the function GET /api/reset_password calls).
 * Without JavaScript the page re-renders with the message; repeated clicks are bounded by the critical limit.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const services = getServices(context);
  const t = await accountT(request);
  const form = await request.formData();
  const intent = 'reset';
  const email = field(form, 'email').trim();
  const values = { email };
  if (!email) return reply({ intent, fieldErrors: { email: [t('reset.emailRequired')] }, values }, 400);
  try {
    await enforceCriticalLimit(request, services, 'reset');
    const ip = clientIp(request, services);
    const at = await authT(request);
    await verifyTurnstile(services, turnstileToken(request, form), ip, at);
    await requestPasswordReset(
      {
        em: services.orm.em.fork(),
        options: services.options,
        t: at,
        mailTransport: services.mailTransport,
        ip,
      },
      email,
    );
    return reply({ intent, status: 'success', message: t('reset.sent'), values });
  } catch (error) {
    return errorReply(error, intent, values);
  }
}

export default function ResetPage() {
  const status = useRouteLoaderData<RootLoaderData>('root')?.status;
  const { t } = useTranslation('account');
  const fetcher = useFetcher<FormReply>({ key: 'password-reset' });
  const countdown = useCountdown(RESET_COOLDOWN_SECONDS);
  const [clientError, setClientError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  const turnstile = Boolean(status?.turnstile_check && status.turnstile_site_key);
  // With JavaScript the fetcher answers in place; without it the POST re-renders the page (action data).
  const actionData = useActionData<typeof action>() as FormReply | undefined;
  const result = fetcher.data ?? actionData;
  useEffect(() => {
    if (result) setClientError(null);
  }, [result]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const form = event.currentTarget;
    setInfo(null);
    if (!String(new FormData(form).get('email') ?? '').trim()) {
      event.preventDefault();
      setClientError(t('reset.emailRequired'));
      return;
    }
    if (turnstile && !hasTurnstileToken(form)) {
      event.preventDefault();
      setInfo(t('common.turnstileChecking'));
      return;
    }
    // Locked for 30 seconds after a click, whatever the answer (seed 001 §4).
    countdown.start();
  }

  const busy = fetcher.state !== 'idle';
  const locked = countdown.remaining > 0;
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="reset-heading">
        <h1 id="reset-heading">{t('reset.heading')}</h1>
        <FormAlert
          message={clientError ?? (result?.status === 'error' ? result.message : null)}
          testId="form-error"
        />
        <FormAlert
          tone="success"
          message={result?.status === 'success' ? result.message : null}
          testId="form-success"
        />
        <FormAlert tone="info" message={info} testId="form-info" />
        <fetcher.Form method="post" className="auth-form" onSubmit={onSubmit} noValidate>
          <Field
            name="email"
            type="email"
            label={t('reset.email')}
            placeholder={t('reset.emailPlaceholder')}
            autoComplete="email"
            inputMode="email"
            defaultValue={result?.values.email}
            errors={result?.fieldErrors.email}
            required
          />
          {turnstile ? <TurnstileWidget siteKey={status?.turnstile_site_key ?? ''} /> : null}
          <Button
            type="submit"
            variant="primary"
            className="auth-submit"
            isDisabled={busy || locked}
            data-testid="reset-submit"
          >
            {locked ? t('reset.locked', { seconds: countdown.remaining }) : t('reset.submit')}
          </Button>
        </fetcher.Form>
        <div className="auth-links">
          <Link to="/login">{t('reset.backToLogin')}</Link>
        </div>
      </section>
    </div>
  );
}
