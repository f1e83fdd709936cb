import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from '@remix-run/node';
import {
  Form,
  useActionData,
  useFetcher,
  useLoaderData,
  useNavigation,
  useRouteLoaderData,
} from '@remix-run/react';
import { type FormEvent, useEffect, useRef, useState } from 'react';
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
import { readAff } from '#app/components/auth/referral.server.ts';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { registerUser } from '#app/domain/auth/register.server.ts';
import { issueEmailCode } from '#app/domain/mail/verification.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import type { RootLoaderData } from '#app/root.tsx';
import { getServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: 'account' };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: authStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Register' }];

/** Seed 000 §5: 8 to 20 characters (the placeholder says so; the server enforces the same). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
/** Seed 000 §9: e-mail code resend countdown. */
export const RESEND_SECONDS = 30;

export async function loader({ request, context }: LoaderFunctionArgs) {
  const services = getServices(context);
  const t = await accountT(request);
  const { aff, setCookie } = await readAff(request);
  const headers = new Headers();
  if (setCookie) headers.append('Set-Cookie', setCookie);
  return data(
    {
      title: t('register.title'),
      aff,
      registerEnabled: services.options.get('RegisterEnabled') !== false,
      passwordRegister: services.options.get('PasswordRegisterEnabled') !== false,
      emailVerification: services.options.get('EmailVerificationEnabled') === true,
    },
    { headers },
  );
}

/** The client-side and server-side checks of seed 000 §5 (same messages on both sides). */
export function checkPasswords(
  t: (key: string) => string,
  username: string,
  password: string,
  password2: string,
): Record<string, string[]> | string | null {
  if (!username || !password) return t('register.required');
  if (password.length < PASSWORD_MIN) return { password: [t('register.passwordTooShort')] };
  if (password.length > PASSWORD_MAX) return { password: [t('register.passwordTooLong')] };
  if (password !== password2) return { password2: [t('register.mismatch')] };
  return null;
}

/**
 * POST /register. intent=send-code: mails a verification code (the page re-renders with the fields kept and
 * the confirmation). intent=register (default): creates the account through A's registerUser (the one
 * POST /api/user/register uses) and redirects to /login with the 'registration success' flash.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const services = getServices(context);
  const t = await accountT(request);
  const form = await request.formData();
  const intent = field(form, 'intent') || 'register';
  const values = {
    username: field(form, 'username').trim(),
    email: field(form, 'email').trim(),
    verification_code: field(form, 'verification_code').trim(),
  };
  if (services.options.get('RegisterEnabled') === false) {
    return reply({ intent, message: t('register.closed'), values }, 403);
  }
  const ip = clientIp(request, services);
  if (intent === 'send-code') {
    if (!values.email) {
      return reply({ intent, fieldErrors: { email: [t('register.emailRequired')] }, values }, 400);
    }
    try {
      await enforceCriticalLimit(request, services, 'verification');
      await verifyTurnstile(services, turnstileToken(request, form), ip, await authT(request));
      await issueEmailCode(
        {
          em: services.orm.em.fork(),
          options: services.options,
          t: await authT(request),
          mailTransport: services.mailTransport,
          ip,
        },
        values.email,
        'register',
      );
      return reply({ intent, status: 'success', message: t('register.codeSent'), values });
    } catch (error) {
      return errorReply(error, intent, values);
    }
  }

  const password = field(form, 'password');
  const password2 = field(form, 'password2');
  const problem = checkPasswords(t, values.username, password, password2);
  if (problem) {
    return typeof problem === 'string'
      ? reply({ intent, message: problem, values }, 400)
      : reply({ intent, message: t('common.formErrors'), fieldErrors: problem, values }, 400);
  }
  if (services.options.get('PasswordRegisterEnabled') === false) {
    return reply({ intent, message: t('register.passwordRegisterClosed'), values }, 403);
  }
  try {
    await enforceCriticalLimit(request, services, 'register');
    await verifyTurnstile(services, turnstileToken(request, form), ip, await authT(request));
    const { aff } = await readAff(request);
    await registerUser(
      { em: services.orm.em.fork(), options: services.options, t: await authT(request), ip },
      {
        username: values.username,
        password,
        password2,
        email: values.email,
        verification_code: values.verification_code,
        aff_code: field(form, 'aff_code') || aff || '',
      },
    );
    return redirectWithToast('/login', { type: 'success', message: t('register.success') });
  } catch (error) {
    return errorReply(error, intent, values);
  }
}

export default function RegisterPage() {
  const { aff, registerEnabled, passwordRegister, emailVerification } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as FormReply | undefined;
  const status = useRouteLoaderData<RootLoaderData>('root')?.status;
  const { t } = useTranslation('account');
  const navigation = useNavigation();
  const busy = navigation.state === 'submitting' && navigation.formData?.get('intent') === 'register';
  const codeFetcher = useFetcher<FormReply>({ key: 'register-send-code' });
  const countdown = useCountdown(RESEND_SECONDS);
  const formRef = useRef<HTMLFormElement>(null);
  const [clientErrors, setClientErrors] = useState<Record<string, string[]>>({});
  const [clientMessage, setClientMessage] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  const turnstile = Boolean(status?.turnstile_check && status.turnstile_site_key);

  // A server answer replaces the client-side findings.
  useEffect(() => {
    if (result) {
      setClientErrors({});
      setClientMessage(null);
    }
  }, [result]);
  // No-JS send-code success also starts nothing (no timer without JS); with JS the fetcher drives it.
  const codeReply = codeFetcher.data;
  useEffect(() => {
    if (codeReply?.status === 'success') countdown.start();
  }, [codeReply, countdown.start]);

  if (!registerEnabled) {
    return (
      <div className="auth-page">
        <section className="auth-card" aria-labelledby="register-heading">
          <h1 id="register-heading">{t('register.title')}</h1>
          <FormAlert tone="info" message={t('register.closed')} testId="register-closed" />
          <div className="auth-links">
            <span>
              {t('register.haveAccount')} <Link to="/login">{t('register.login')}</Link>
            </span>
          </div>
        </section>
      </div>
    );
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const form = event.currentTarget;
    const fd = new FormData(form);
    setInfo(null);
    if (submitter?.value === 'send-code') {
      event.preventDefault();
      sendCode(form);
      return;
    }
    const problem = checkPasswords(
      (k) => t(k),
      String(fd.get('username') ?? '').trim(),
      String(fd.get('password') ?? ''),
      String(fd.get('password2') ?? ''),
    );
    if (problem) {
      event.preventDefault();
      setClientMessage(typeof problem === 'string' ? problem : t('common.formErrors'));
      setClientErrors(typeof problem === 'string' ? {} : problem);
      return;
    }
    if (turnstile && !hasTurnstileToken(form)) {
      event.preventDefault();
      setInfo(t('common.turnstileChecking'));
    }
  }

  function sendCode(form: HTMLFormElement) {
    const fd = new FormData(form);
    const email = String(fd.get('email') ?? '').trim();
    if (!email) {
      setClientErrors({ email: [t('register.emailRequired')] });
      return;
    }
    if (turnstile && !hasTurnstileToken(form)) {
      setInfo(t('common.turnstileChecking'));
      return;
    }
    setClientErrors({});
    fd.set('intent', 'send-code');
    codeFetcher.submit(fd, { method: 'post' });
  }

  const codeResult = codeReply ?? (result?.intent === 'send-code' ? result : undefined);
  const registerResult = result?.intent === 'register' ? result : undefined;
  const fieldErrors = {
    ...(codeResult?.fieldErrors ?? {}),
    ...(registerResult?.fieldErrors ?? {}),
    ...clientErrors,
  };
  const errorMessage =
    clientMessage ??
    (registerResult?.status === 'error' ? registerResult.message : null) ??
    (codeResult?.status === 'error' ? codeResult.message : null);
  const successMessage = codeResult?.status === 'success' ? codeResult.message : null;
  const values = result?.values ?? {};
  const sending = codeFetcher.state !== 'idle';

  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="register-heading">
        <h1 id="register-heading">{t('register.heading', { name: status?.system_name ?? 'Switchyard' })}</h1>
        <FormAlert message={errorMessage} testId="form-error" />
        <FormAlert tone="success" message={successMessage} testId="form-success" />
        <FormAlert tone="info" message={info} testId="form-info" />
        {passwordRegister ? (
          <Form method="post" className="auth-form" onSubmit={onSubmit} noValidate ref={formRef}>
            {/* Enter in any field registers (the first submit button is the form's default button). */}
            <button
              type="submit"
              name="intent"
              value="register"
              tabIndex={-1}
              aria-hidden="true"
              style={{ position: 'absolute', left: '-9999px', width: 1, height: 1 }}
            />
            {aff ? <input type="hidden" name="aff_code" value={aff} /> : null}
            <Field
              name="username"
              label={t('register.username')}
              placeholder={t('register.usernamePlaceholder')}
              autoComplete="username"
              defaultValue={values.username}
              errors={fieldErrors.username}
              maxLength={20}
              required
            />
            <Field
              name="password"
              type="password"
              label={t('register.password')}
              placeholder={t('register.passwordPlaceholder')}
              autoComplete="new-password"
              errors={fieldErrors.password}
              minLength={PASSWORD_MIN}
              maxLength={PASSWORD_MAX}
              required
            />
            <Field
              name="password2"
              type="password"
              label={t('register.password2')}
              placeholder={t('register.password2Placeholder')}
              autoComplete="new-password"
              errors={fieldErrors.password2}
              required
            />
            {emailVerification ? (
              <>
                <Field
                  name="email"
                  type="email"
                  label={t('register.email')}
                  placeholder={t('register.emailPlaceholder')}
                  autoComplete="email"
                  inputMode="email"
                  defaultValue={values.email}
                  errors={fieldErrors.email}
                  required
                >
                  <Button
                    type="submit"
                    name="intent"
                    value="send-code"
                    isDisabled={sending || countdown.remaining > 0}
                    data-testid="send-code"
                  >
                    {countdown.remaining > 0
                      ? t('register.resend', { seconds: countdown.remaining })
                      : t('register.sendCode')}
                  </Button>
                </Field>
                <Field
                  name="verification_code"
                  label={t('register.code')}
                  placeholder={t('register.codePlaceholder')}
                  autoComplete="one-time-code"
                  inputMode="numeric"
                  defaultValue={values.verification_code}
                  errors={fieldErrors.verification_code}
                  required
                />
              </>
            ) : null}
            {turnstile ? <TurnstileWidget siteKey={status?.turnstile_site_key ?? ''} /> : null}
            <Button
              type="submit"
              name="intent"
              value="register"
              variant="primary"
              className="auth-submit"
              isDisabled={busy}
            >
              {busy ? t('register.submitting') : t('register.submit')}
            </Button>
          </Form>
        ) : (
          <FormAlert tone="info" message={t('register.passwordRegisterClosed')} />
        )}
        <div className="auth-links">
          <span>
            {t('register.haveAccount')} <Link to="/login">{t('register.login')}</Link>
          </span>
        </div>
      </section>
    </div>
  );
}
