import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { accountT } from '#app/components/auth/account-t.server.ts';
import { errorReply, type FormReply, field, reply } from '#app/components/auth/action.server.ts';
import authStyles from '#app/components/auth/auth.css?url';
import { Field, FormAlert } from '#app/components/auth/fields.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { resetPassword } from '#app/domain/auth/password-reset.server.ts';
import { enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { getServices } from '#app/services.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

export const handle = { i18n: 'account' };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: authStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Reset' }];

/** GET /user/reset?email&token: the link of the reset mail (seed 001 §2.8 confirm screen). */
export async function loader({ request }: LoaderFunctionArgs) {
  const t = await accountT(request);
  const url = new URL(request.url);
  const email = url.searchParams.get('email') ?? '';
  const token = url.searchParams.get('token') ?? '';
  return data({ title: t('confirm.title'), email, token, valid: Boolean(email && token) });
}

/**
 * POST /user/reset: consumes the token and answers with the new password (A's resetPassword, the function
 * POST /api/user/reset calls). The password is shown once in this answer, never stored in a cookie.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const services = getServices(context);
  const t = await accountT(request);
  const form = await request.formData();
  const intent = 'confirm';
  const email = field(form, 'email').trim();
  const token = field(form, 'token').trim();
  if (!email || !token) return reply({ intent, message: t('confirm.invalidLink') }, 400);
  try {
    await enforceCriticalLimit(request, services, 'reset');
    const password = await resetPassword(
      { em: services.orm.em.fork(), options: services.options, t: await authT(request) },
      { email, token },
    );
    return reply({ intent, status: 'success', message: t('confirm.done'), payload: { password } });
  } catch (error) {
    return errorReply(error, intent, { email });
  }
}

export default function ResetConfirmPage() {
  const { email, token, valid } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as FormReply | undefined;
  const { t } = useTranslation('account');
  const navigation = useNavigation();
  const busy = navigation.state === 'submitting';
  const password = result?.status === 'success' ? (result.payload?.password ?? '') : '';

  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="confirm-heading">
        <h1 id="confirm-heading">{t('confirm.heading')}</h1>
        <FormAlert
          message={!valid ? t('confirm.invalidLink') : result?.status === 'error' ? result.message : null}
          testId="form-error"
        />
        <FormAlert tone="success" message={password ? result?.message : null} testId="form-success" />
        {password ? (
          <NewPassword password={password} />
        ) : valid ? (
          <Form method="post" className="auth-form">
            <Field
              name="email"
              type="email"
              label={t('confirm.email')}
              autoComplete="email"
              defaultValue={email}
              readOnly
            />
            <input type="hidden" name="token" value={token} />
            <Button type="submit" variant="primary" className="auth-submit" isDisabled={busy}>
              {busy ? t('confirm.submitting') : t('confirm.submit')}
            </Button>
          </Form>
        ) : null}
        <div className="auth-links">
          <Link to="/login">{t('confirm.goLogin')}</Link>
        </div>
      </section>
    </div>
  );
}

/** The new password, read-only and selectable; with JavaScript it is copied (seed 001 §2.8) with a fallback. */
function NewPassword({ password }: { password: string }) {
  const { t } = useTranslation('account');
  const hydrated = useHydrated();
  const id = useId();
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');

  async function copy() {
    try {
      await navigator.clipboard.writeText(password);
      setCopyState('copied');
    } catch {
      setCopyState('failed');
    }
  }
  // Seed 001 §2.8: "displays and copies the newly generated password".
  useEffect(() => {
    if (hydrated) void copy();
  }, [hydrated, password]);

  return (
    <div className="auth-field">
      <label htmlFor={id}>{t('confirm.newPassword')}</label>
      <div className="auth-input-row">
        <input
          id={id}
          readOnly
          value={password}
          className="auth-password"
          data-testid="new-password"
          autoComplete="new-password"
          onFocus={(e) => e.currentTarget.select()}
        />
        {hydrated ? (
          <Button type="button" onPress={() => void copy()}>
            {t('confirm.copy')}
          </Button>
        ) : null}
      </div>
      <FormAlert
        tone={copyState === 'failed' ? 'warning' : 'success'}
        message={
          copyState === 'copied'
            ? t('confirm.copied', { text: password })
            : copyState === 'failed'
              ? t('confirm.copyFailed')
              : null
        }
        testId="copy-state"
      />
    </div>
  );
}
