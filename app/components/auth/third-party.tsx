import { Form } from '@remix-run/react';
import { useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { FormAlert } from '#app/components/auth/fields.tsx';
import { Button } from '#app/components/ui/button.tsx';
import type { PublicStatus } from '#app/domain/status/status.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

/**
 * Third-party login buttons, each shown only when enabled in the public status (seed 000 §2 Login page).
 * GitHub / LinuxDO: a form posting intent=oauth to /login, whose action creates the state and redirects to
 * the provider (works without JavaScript). WeChat: a disclosure (the QR "modal") with the QR code and a code
 * form posting intent=wechat to /login (B's wechatLogin, the function GET /api/oauth/wechat calls). Telegram: the official widget script (JavaScript only).
 */
export function ThirdPartyLogin({
  status,
  wechatError = null,
}: {
  status: PublicStatus;
  wechatError?: string | null;
}) {
  const { t } = useTranslation('account');
  const any = status.github_oauth || status.linuxdo_oauth || status.wechat_login || status.telegram_oauth;
  if (!any) return null;
  return (
    <section className="auth-third-party" aria-labelledby="third-party-heading">
      <p id="third-party-heading" className="auth-divider">
        {t('login.others')}
      </p>
      <div className="auth-providers">
        {status.github_oauth ? <OAuthButton provider="github" label={t('login.github')} /> : null}
        {status.linuxdo_oauth ? <OAuthButton provider="linuxdo" label={t('login.linuxdo')} /> : null}
        {status.wechat_login ? <WeChatLogin qrcode={status.wechat_qrcode} error={wechatError} /> : null}
        {status.telegram_oauth && status.telegram_bot_name ? (
          <TelegramLogin botName={status.telegram_bot_name} />
        ) : null}
      </div>
    </section>
  );
}

function OAuthButton({ provider, label }: { provider: 'github' | 'linuxdo'; label: string }) {
  return (
    <Form method="post" action="/login" reloadDocument className="inline-form">
      <input type="hidden" name="intent" value="oauth" />
      <input type="hidden" name="provider" value={provider} />
      <Button type="submit" data-testid={`oauth-${provider}`}>
        {label}
      </Button>
    </Form>
  );
}

function WeChatLogin({ qrcode, error }: { qrcode: string; error: string | null }) {
  const { t } = useTranslation('account');
  const codeId = useId();
  return (
    <details className="dropdown auth-wechat" open={error ? true : undefined}>
      <summary data-testid="oauth-wechat">{t('login.wechat')}</summary>
      <div className="auth-wechat-panel">
        <strong>{t('login.wechatTitle')}</strong>
        {qrcode ? <img src={qrcode} alt={t('login.wechatQrAlt')} /> : null}
        <p className="auth-hint">{t('login.wechatHint')}</p>
        <FormAlert message={error} testId="wechat-error" />
        <Form method="post" action="/login" className="auth-form">
          <input type="hidden" name="intent" value="wechat" />
          <div className="auth-field">
            <label htmlFor={codeId}>{t('login.wechatCode')}</label>
            <div className="auth-input-row">
              <input id={codeId} name="code" autoComplete="one-time-code" required />
            </div>
          </div>
          <Button type="submit" variant="primary">
            {t('login.wechatSubmit')}
          </Button>
        </Form>
      </div>
    </details>
  );
}

function TelegramLogin({ botName }: { botName: string }) {
  const { t } = useTranslation('account');
  const hydrated = useHydrated();
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const host = ref.current;
    if (!hydrated || !host || host.childElementCount > 0) return;
    const script = document.createElement('script');
    script.src = 'https://telegram.org/js/telegram-widget.js?22';
    script.async = true;
    script.dataset.telegramLogin = botName;
    script.dataset.size = 'medium';
    script.dataset.authUrl = '/api/oauth/telegram/login';
    host.appendChild(script);
  }, [hydrated, botName]);
  return (
    <div ref={ref} className="auth-telegram" title={t('login.telegram')} data-testid="oauth-telegram">
      {hydrated ? null : <span className="auth-hint">{t('login.telegramNoJs')}</span>}
    </div>
  );
}
