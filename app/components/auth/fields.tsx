import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useHydrated } from '#app/utils/hydrated.ts';

/**
 * Form pieces shared by the login, register and reset pages. Native inputs with visible labels, autocomplete
 * attributes and errors tied through aria-describedby, so they work (and are announced) without JavaScript.
 */
export type FieldProps = {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password';
  autoComplete: string;
  placeholder?: string;
  defaultValue?: string;
  errors?: string[] | undefined;
  required?: boolean;
  readOnly?: boolean;
  minLength?: number;
  maxLength?: number;
  inputMode?: 'text' | 'numeric' | 'email';
  children?: ReactNode;
};

export function Field({ name, label, type = 'text', errors, children, defaultValue, ...input }: FieldProps) {
  const id = useId();
  const errorId = `${id}-error`;
  const invalid = Boolean(errors && errors.length > 0);
  return (
    <div className="auth-field">
      <label htmlFor={id}>{label}</label>
      <div className="auth-input-row">
        <input
          id={id}
          name={name}
          type={type}
          defaultValue={defaultValue}
          aria-invalid={invalid || undefined}
          aria-describedby={invalid ? errorId : undefined}
          {...input}
        />
        {children}
      </div>
      {invalid ? (
        <p id={errorId} className="auth-field-error">
          {errors?.join(' ')}
        </p>
      ) : null}
    </div>
  );
}

/** Form-level message: errors are announced assertively, information politely. */
export function FormAlert({
  message,
  tone = 'error',
  testId,
}: {
  message: string | null | undefined;
  tone?: 'error' | 'info' | 'success' | 'warning';
  testId?: string;
}) {
  return (
    <div
      className={message ? `auth-alert auth-alert-${tone}` : 'auth-alert-empty'}
      role={tone === 'error' || tone === 'warning' ? 'alert' : 'status'}
      aria-live={tone === 'error' || tone === 'warning' ? 'assertive' : 'polite'}
      data-testid={testId ?? `auth-${tone}`}
    >
      {message ?? ''}
    </div>
  );
}

/** A countdown in seconds; `start()` begins it, `remaining` is 0 when idle. */
export function useCountdown(seconds: number): { remaining: number; start(): void } {
  const [remaining, setRemaining] = useState(0);
  const timer = useRef<ReturnType<typeof setInterval> | null>(null);
  const start = useCallback(() => {
    if (timer.current) clearInterval(timer.current);
    setRemaining(seconds);
    timer.current = setInterval(() => {
      setRemaining((r) => {
        if (r <= 1 && timer.current) {
          clearInterval(timer.current);
          timer.current = null;
        }
        return Math.max(0, r - 1);
      });
    }, 1000);
  }, [seconds]);
  useEffect(
    () => () => {
      if (timer.current) clearInterval(timer.current);
    },
    [],
  );
  return { remaining, start };
}

const TURNSTILE_SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js';

/**
 * Cloudflare Turnstile widget (seed 000 §2: a bot-check widget appears when enabled). The script renders into
 * `.cf-turnstile` and adds the hidden `cf-turnstile-response` input to the enclosing form. Without JavaScript
 * the widget cannot run: a notice says so (the server then refuses the missing token with its message).
 */
export function TurnstileWidget({ siteKey }: { siteKey: string }) {
  const { t } = useTranslation('account');
  const hydrated = useHydrated();
  useEffect(() => {
    if (!hydrated || document.querySelector(`script[src="${TURNSTILE_SCRIPT}"]`)) return;
    const script = document.createElement('script');
    script.src = TURNSTILE_SCRIPT;
    script.async = true;
    script.defer = true;
    document.head.appendChild(script);
  }, [hydrated]);
  return (
    <fieldset className="auth-turnstile">
      <legend className="auth-hint">{t('common.turnstileLabel')}</legend>
      <div className="cf-turnstile" data-sitekey={siteKey} data-testid="turnstile" />
      {hydrated ? null : <p className="auth-hint">{t('common.turnstileNoJs')}</p>}
    </fieldset>
  );
}

/** True when the Turnstile widget has put a token into `form`. */
export function hasTurnstileToken(form: HTMLFormElement): boolean {
  const value = new FormData(form).get('cf-turnstile-response');
  return typeof value === 'string' && value.length > 0;
}
