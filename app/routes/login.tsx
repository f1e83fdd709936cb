import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
  redirect,
} from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation, useRouteLoaderData } from '@remix-run/react';
import { isDefaultRootPassword } from '@switchyard/db/bootstrap.ts';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { accountT } from '#app/components/auth/account-t.server.ts';
import { errorReply, type FormReply, field, reply } from '#app/components/auth/action.server.ts';
import authStyles from '#app/components/auth/auth.css?url';
import { Field, FormAlert, hasTurnstileToken, TurnstileWidget } from '#app/components/auth/fields.tsx';
import { oauthStartRedirect } from '#app/components/auth/oauth-start.server.ts';
import { readAff } from '#app/components/auth/referral.server.ts';
import { ThirdPartyLogin } from '#app/components/auth/third-party.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { loginWithPassword } from '#app/domain/auth/login.server.ts';
import { wechatLogin } from '#app/domain/oauth/wechat.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import type { RootLoaderData } from '#app/root.tsx';
import { getServices } from '#app/services.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader } from '#app/utils/toast.server.ts';

export const handle = { i18n: 'account' };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: authStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Login' }];

export async function loader({ request, context }: LoaderFunctionArgs) {
  const services = getServices(context);
  const t = await accountT(request);
  const url = new URL(request.url);
  const { setCookie } = await readAff(request);
  const headers = new Headers();
  if (setCookie) headers.append('Set-Cookie', setCookie);
  return data(
    {
      title: t('login.title'),
      expired: url.searchParams.get('expired') === 'true',
      redirectTo: afterLogin(request, url.searchParams.get('redirectTo'), ''),
      passwordLogin: services.options.get('PasswordLoginEnabled') !== false,
      registerEnabled: services.options.get('RegisterEnabled') !== false,
    },
    { headers },
  );
}

/**
 * POST /login. intent=login (default): username-or-email + password -> session cookie -> redirect to a safe
 * redirectTo or /token. intent=oauth: creates the OAuth state (engineer B's domain) and redirects to the
 * provider, so third-party login works without JavaScript too.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const services = getServices(context);
  const form = await request.formData();
  const intent = field(form, 'intent') || 'login';
  if (intent === 'oauth') {
    const { aff } = await readAff(request);
    return oauthStartRedirect(request, services, field(form, 'provider'), aff);
  }
  if (intent === 'wechat') {
    try {
      const { setCookie } = await wechatLogin(services, request, field(form, 'code'));
      return redirect(afterLogin(request, field(form, 'redirectTo')), {
        headers: { 'Set-Cookie': setCookie },
      });
    } catch (error) {
      return errorReply(error, intent, {});
    }
  }
  const t = await accountT(request);
  const username = field(form, 'username').trim();
  const password = field(form, 'password');
  const values = { username, redirectTo: field(form, 'redirectTo') };
  if (!username || !password) {
    return reply({ intent, message: t('login.required'), values }, 400);
  }
  try {
    await enforceCriticalLimit(request, services, 'login');
    await verifyTurnstile(
      services,
      turnstileToken(request, form),
      clientIp(request, services),
      await authT(request),
    );
    const { cookies, entity } = await loginWithPassword(services, { username, password }, request);
    const headers = new Headers();
    for (const cookie of cookies) headers.append('Set-Cookie', cookie);
    // Seed 000 §2: warn when the root account still has the default password.
    const defaultRoot = await isDefaultRootPassword(entity);
    headers.append(
      'Set-Cookie',
      await createToastHeader(
        defaultRoot
          ? { type: 'error', message: t('login.defaultRoot') }
          : { type: 'success', message: t('login.success') },
      ),
    );
    return redirect(afterLogin(request, values.redirectTo), { headers });
  } catch (error) {
    return errorReply(error, intent, values);
  }
}

/** Where a login sends the browser: the same-origin `redirectTo`, never an auth page itself, else /token. */
function afterLogin(request: Request, target: string | null, fallback = '/token'): string {
  return safeRedirect(target, fallback, { base: request, avoid: /^\/(login|register|reset)(\/|$)/ });
}

export default function LoginPage() {
  const { expired, redirectTo, passwordLogin, registerEnabled } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as FormReply | undefined;
  const root = useRouteLoaderData<RootLoaderData>('root');
  const status = root?.status;
  const { t } = useTranslation('account');
  const navigation = useNavigation();
  const busy = navigation.state === 'submitting' && navigation.formData?.get('intent') === 'login';
  const [clientError, setClientError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  useEffect(() => {
    if (result) setClientError(null);
  }, [result]);
  const turnstile = Boolean(status?.turnstile_check && status.turnstile_site_key);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const form = event.currentTarget;
    const fd = new FormData(form);
    setInfo(null);
    if (!String(fd.get('username') ?? '').trim() || !fd.get('password')) {
      event.preventDefault();
      setClientError(t('login.required'));
      return;
    }
    if (turnstile && !hasTurnstileToken(form)) {
      event.preventDefault();
      setInfo(t('common.turnstileChecking'));
    }
  }

  const message =
    clientError ?? (result?.status === 'error' && result.intent !== 'wechat' ? result.message : null);
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="login-heading">
        <h1 id="login-heading">{t('login.heading', { name: status?.system_name ?? 'Switchyard' })}</h1>
        {expired ? <FormAlert tone="warning" message={t('login.expired')} testId="login-expired" /> : null}
        <FormAlert message={message} testId="form-error" />
        <FormAlert tone="info" message={info} testId="form-info" />
        {passwordLogin ? (
          <Form method="post" className="auth-form" onSubmit={onSubmit} noValidate>
            <input type="hidden" name="intent" value="login" />
            <input type="hidden" name="redirectTo" value={redirectTo} />
            <Field
              name="username"
              label={t('login.username')}
              placeholder={t('login.usernamePlaceholder')}
              autoComplete="username"
              defaultValue={result?.values.username}
              required
            />
            <Field
              name="password"
              type="password"
              label={t('login.password')}
              placeholder={t('login.passwordPlaceholder')}
              autoComplete="current-password"
              required
            />
            {turnstile ? <TurnstileWidget siteKey={status?.turnstile_site_key ?? ''} /> : null}
            <Button type="submit" variant="primary" className="auth-submit" isDisabled={busy}>
              {busy ? t('login.submitting') : t('login.submit')}
            </Button>
          </Form>
        ) : (
          <FormAlert tone="info" message={t('login.passwordLoginDisabled')} />
        )}
        <div className="auth-links">
          {registerEnabled ? (
            <span>
              {t('login.noAccount')} <Link to="/register">{t('login.register')}</Link>
            </span>
          ) : null}
          <span>
            {t('login.forgot')} <Link to="/reset">{t('login.reset')}</Link>
          </span>
        </div>
        {status ? (
          <ThirdPartyLogin
            status={status}
            wechatError={result?.intent === 'wechat' ? result.message : null}
          />
        ) : null}
      </section>
    </div>
  );
}
