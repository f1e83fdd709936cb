/**
 * Settings "personal" tab (seed 000 §2): profile, invitation, personal info and notification cards, and the
 * dialogs (transfer, password, delete, e-mail, WeChat) as page sections opened by `?dialog=` (no JavaScript
 * needed). Its actions are app/domain/settings/personal.server.ts.
 */
import { Form, useActionData, useLocation, useNavigation } from '@remix-run/react';
import { Role } from '@switchyard/db/entities/user.ts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TimeZoneForm } from '#app/components/preference-forms.tsx';
import { UrlDialog } from '#app/components/settings/dialog.tsx';
import { useApiClient, useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { THRESHOLD_PRESETS } from '#app/domain/account/setting.ts';
import type { PersonalTabData } from '#app/domain/account/settings-page.server.ts';
import type { SettingDialog } from '#app/domain/account/tabs.ts';
import type { PersonalReply } from '#app/domain/settings/personal.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { useNonce } from '#app/utils/nonce.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

const PERSONAL = '/setting?tab=personal';

function useReply(intent: string): PersonalReply | undefined {
  const reply = useActionData() as PersonalReply | undefined;
  return reply?.intent === intent ? reply : undefined;
}

function FormError({ intent }: { intent: string }) {
  const reply = useReply(intent);
  if (!reply?.error) return null;
  return (
    <p className="form-error" role="alert">
      {reply.error}
    </p>
  );
}

function useBusy(intent: string): boolean {
  const navigation = useNavigation();
  return navigation.state === 'submitting' && navigation.formData?.get('intent') === intent;
}

function useCopy() {
  const { notify } = useToast();
  const { t } = useTranslation('settings');
  return async (value: string) => {
    try {
      await navigator.clipboard.writeText(value);
      notify({ type: 'success', message: t('toast.copied') });
    } catch {
      notify({ type: 'error', message: t('toast.copyFailed') });
    }
  };
}

function CopyField({ label, value, name }: { label: string; value: string; name: string }) {
  const hydrated = useHydrated();
  const copy = useCopy();
  return (
    <div className="copy-row">
      <input
        type="text"
        readOnly
        aria-label={label}
        value={value}
        name={name}
        onFocus={(e) => e.target.select()}
      />
      {hydrated ? <Button onPress={() => void copy(value)}>{label}</Button> : null}
    </div>
  );
}

export function PersonalTab({
  data,
  dialog,
  email,
}: {
  data: PersonalTabData;
  dialog: SettingDialog | null;
  email: string;
}) {
  return (
    <>
      <div className="settings-grid">
        <ProfileCard data={data} />
        <InviteCard data={data} />
        <InfoCard data={data} />
        <NotifyCard data={data} />
        <TimeZoneCard />
      </div>
      {dialog === 'transfer' ? <TransferDialog data={data} /> : null}
      {dialog === 'password' ? <PasswordDialog hasPassword={data.hasPassword} /> : null}
      {dialog === 'delete' ? (
        <DeleteDialog username={data.self.username} hasPassword={data.hasPassword} />
      ) : null}
      {dialog === 'email' ? <EmailDialog data={data} email={email} /> : null}
      {dialog === 'wechat' ? <WechatDialog data={data} /> : null}
    </>
  );
}

const MODEL_TAG_LIMIT = 10;

function ProfileCard({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  const { self, models, modelsExpanded, display } = data;
  const name = self.display_name || self.username;
  const shown = modelsExpanded ? models : models.slice(0, MODEL_TAG_LIMIT);
  return (
    <section className="card profile-card" aria-labelledby="profile-title">
      <h2 id="profile-title">{t('profile.title')}</h2>
      <div className="profile-head">
        <span className="profile-avatar" aria-hidden="true">
          {name.slice(0, 1).toUpperCase()}
        </span>
        <div>
          <strong data-testid="profile-username">{self.username}</strong>{' '}
          {self.role >= Role.Admin ? (
            <span className="tag tag-red">{t('profile.admin')}</span>
          ) : (
            <span className="tag tag-blue">{t('profile.user')}</span>
          )}
          <div>
            {t('profile.id')}: {self.id} · {t('profile.group')}: {self.group}
          </div>
        </div>
      </div>
      <h3>{t('profile.models')}</h3>
      {models.length === 0 ? (
        <p className="field-hint">{t('profile.noModels')}</p>
      ) : (
        <>
          <ul className="model-tags" aria-label={t('profile.models')}>
            {shown.map((m) => (
              <li key={m} className="tag tag-grey">
                {m}
              </li>
            ))}
          </ul>
          {models.length > MODEL_TAG_LIMIT ? (
            <Form method="post" action={PERSONAL} className="inline">
              <input type="hidden" name="expanded" value={modelsExpanded ? 'false' : 'true'} />
              <Button type="submit" variant="ghost" name="intent" value="models">
                {modelsExpanded
                  ? t('profile.collapse')
                  : t('profile.more', { count: models.length - MODEL_TAG_LIMIT })}
              </Button>
            </Form>
          ) : null}
        </>
      )}
      <dl className="stats">
        <div>
          <dt>{t('profile.balance')}</dt>
          <dd data-testid="balance">{formatQuota(self.quota, display)}</dd>
        </div>
        <div>
          <dt>{t('profile.used')}</dt>
          <dd>{formatQuota(self.used_quota, display)}</dd>
        </div>
        <div>
          <dt>{t('profile.requests')}</dt>
          <dd>{self.request_count}</dd>
        </div>
      </dl>
    </section>
  );
}

function InviteCard({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  const { self, display } = data;
  return (
    <section className="card invite-card" aria-labelledby="invite-title">
      <h2 id="invite-title">{t('invite.title')}</h2>
      <p>{t('invite.link')}</p>
      <CopyField label={t('invite.link')} value={data.inviteLink} name="invite_link" />
      <dl className="stats">
        <div>
          <dt>{t('invite.pending')}</dt>
          <dd data-testid="aff-quota">{formatQuota(self.aff_quota, display)}</dd>
        </div>
        <div>
          <dt>{t('invite.total')}</dt>
          <dd>{formatQuota(self.aff_history_quota, display)}</dd>
        </div>
        <div>
          <dt>{t('invite.count')}</dt>
          <dd>{self.aff_count}</dd>
        </div>
      </dl>
      <div className="actions">
        <Link to={`${PERSONAL}&dialog=transfer`} className="btn btn-primary">
          {t('invite.transfer')}
        </Link>
      </div>
    </section>
  );
}

function BindState({ bound, enabled }: { bound: string; enabled: boolean }) {
  const { t } = useTranslation('settings');
  if (bound) return <span>{bound}</span>;
  return <span className="field-hint">{enabled ? t('info.unbound') : t('info.notEnabled')}</span>;
}

function OAuthBindButton({
  provider,
  enabled,
  bound,
}: {
  provider: 'github' | 'linuxdo';
  enabled: boolean;
  bound: boolean;
}) {
  const { t } = useTranslation('settings');
  return (
    <Form method="post" action={PERSONAL} className="inline">
      <input type="hidden" name="provider" value={provider} />
      <Button type="submit" name="intent" value="oauthBind" isDisabled={!enabled || bound}>
        {t('info.bind')}
      </Button>
    </Form>
  );
}

/** The time zone of times and date filters (a preference cookie; the browser's zone once JavaScript ran). */
function TimeZoneCard() {
  const { t } = useTranslation();
  const timeZone = useTimeZone();
  return (
    <section className="card" aria-labelledby="timezone-title">
      <h2 id="timezone-title">{t('preferences.timeZoneTitle')}</h2>
      <TimeZoneForm timeZone={timeZone} />
    </section>
  );
}

function InfoCard({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  // the Telegram widget's script is rendered by the server: it runs only with this page's CSP nonce
  const nonce = useNonce();
  const { self, providers } = data;
  const token = useReply('token')?.token;
  const tokenBusy = useBusy('token');
  return (
    <section className="card info-card" aria-labelledby="info-title">
      <h2 id="info-title">{t('info.title')}</h2>
      <dl className="kv">
        <dt>{t('info.email')}</dt>
        <dd data-testid="email-state">
          <BindState bound={self.email} enabled />
        </dd>
        <dd>
          <Link to={`${PERSONAL}&dialog=email`} className="btn">
            {t('info.bind')}
          </Link>
        </dd>
        <dt>{t('info.wechat')}</dt>
        <dd>
          <BindState bound={self.wechat_id ? t('info.bound') : ''} enabled={providers.wechat} />
        </dd>
        <dd>
          {providers.wechat && !self.wechat_id ? (
            <Link to={`${PERSONAL}&dialog=wechat`} className="btn">
              {t('info.bind')}
            </Link>
          ) : (
            <Button isDisabled>{t('info.bind')}</Button>
          )}
        </dd>
        <dt>{t('info.github')}</dt>
        <dd>
          <BindState bound={self.github_id} enabled={providers.github} />
        </dd>
        <dd>
          <OAuthBindButton provider="github" enabled={providers.github} bound={Boolean(self.github_id)} />
        </dd>
        <dt>{t('info.telegram')}</dt>
        <dd>
          <BindState bound={self.telegram_id} enabled={providers.telegram} />
        </dd>
        <dd>
          {providers.telegram && !self.telegram_id && data.telegramBot ? (
            <script
              async
              nonce={nonce}
              src="https://telegram.org/js/telegram-widget.js?22"
              data-telegram-login={data.telegramBot}
              data-size="small"
              data-auth-url="/api/oauth/telegram/bind"
            />
          ) : null}
        </dd>
        <dt>{t('info.linuxdo')}</dt>
        <dd>
          <BindState bound={self.linux_do_id} enabled={providers.linuxdo} />
        </dd>
        <dd>
          <OAuthBindButton provider="linuxdo" enabled={providers.linuxdo} bound={Boolean(self.linux_do_id)} />
        </dd>
      </dl>
      {token ? (
        <div className="token-issued" role="status">
          <p>
            <strong>{t('info.tokenIssued')}</strong>
          </p>
          <CopyField label={t('info.tokenIssued')} value={token} name="access_token" />
          <p className="field-hint">{t('info.tokenHint')}</p>
        </div>
      ) : null}
      <div className="actions">
        <Form method="post" action={PERSONAL} className="inline">
          <Button type="submit" name="intent" value="token" isDisabled={tokenBusy}>
            {t('info.token')}
          </Button>
        </Form>
        <Link to={`${PERSONAL}&dialog=password`} className="btn">
          {t('info.changePassword')}
        </Link>
        <Link to={`${PERSONAL}&dialog=delete`} className="btn btn-danger">
          {t('info.deleteAccount')}
        </Link>
      </div>
    </section>
  );
}

function NotifyCard({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  const n = data.notify;
  const [type, setType] = useState(n.notify_type);
  const busy = useBusy('notify');
  return (
    <section className="card notify-card" aria-labelledby="notify-title">
      <h2 id="notify-title">{t('notify.title')}</h2>
      <Form method="post" action={PERSONAL} className="settings-form">
        <fieldset>
          <legend>{t('notify.type')}</legend>
          <label className="inline">
            <input
              type="radio"
              name="notify_type"
              value="email"
              defaultChecked={n.notify_type === 'email'}
              onChange={() => setType('email')}
            />{' '}
            {t('notify.email')}
          </label>{' '}
          <label className="inline">
            <input
              type="radio"
              name="notify_type"
              value="webhook"
              defaultChecked={n.notify_type === 'webhook'}
              onChange={() => setType('webhook')}
            />{' '}
            {t('notify.webhook')}
          </label>
        </fieldset>
        <label>
          {t('notify.threshold')}
          <input
            type="number"
            name="quota_warning_threshold"
            min={1}
            step={1}
            list="threshold-presets"
            defaultValue={n.quota_warning_threshold}
            required
          />
          <span className="field-hint">{t('notify.thresholdHint')}</span>
        </label>
        <datalist id="threshold-presets">
          {THRESHOLD_PRESETS.map((p) => (
            <option key={p} value={p} label={formatQuota(p, data.display)} />
          ))}
        </datalist>
        <label>
          {t('notify.webhookUrl')}
          <input
            type="url"
            name="webhook_url"
            defaultValue={n.webhook_url}
            placeholder="https://"
            required={type === 'webhook'}
          />
          <span className="field-hint">{t('notify.webhookUrlHint')}</span>
        </label>
        <label>
          {t('notify.webhookSecret')}
          <input
            type="password"
            name="webhook_secret"
            autoComplete="off"
            placeholder={n.webhook_secret_set ? t('notify.webhookSecretSet') : ''}
          />
          <span className="field-hint">{t('notify.webhookSecretHint')}</span>
        </label>
        <label>
          {t('notify.notificationEmail')}
          <input type="email" name="notification_email" defaultValue={n.notification_email} />
          <span className="field-hint">{t('notify.notificationEmailHint')}</span>
        </label>
        <FormError intent="notify" />
        <div>
          <Button type="submit" variant="primary" name="intent" value="notify" isDisabled={busy}>
            {t('notify.save')}
          </Button>
        </div>
      </Form>
    </section>
  );
}

function DialogActions({ intent, label, danger }: { intent: string; label: string; danger?: boolean }) {
  const { t } = useTranslation('settings');
  const busy = useBusy(intent);
  return (
    <div className="actions">
      <Button
        type="submit"
        variant="primary"
        name="intent"
        value={intent}
        isDisabled={busy}
        className={danger ? 'btn-danger' : undefined}
      >
        {label}
      </Button>
      <Link to={PERSONAL} className="btn">
        {t('dialogs.cancel')}
      </Link>
    </div>
  );
}

function TransferDialog({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  const min = formatQuota(data.minTransfer, data.display);
  return (
    <UrlDialog id="transfer" title={t('dialogs.transferTitle')} closeTo={PERSONAL}>
      <Form method="post" action={`${PERSONAL}&dialog=transfer`} className="settings-form">
        <p>
          {t('dialogs.transferAvailable')}: {formatQuota(data.self.aff_quota, data.display)}
        </p>
        <label>
          {t('dialogs.transferAmount')}
          <input
            type="number"
            name="quota"
            min={data.minTransfer}
            max={Math.max(data.self.aff_quota, data.minTransfer)}
            step={1}
            defaultValue={Math.max(data.self.aff_quota, data.minTransfer)}
            required
          />
          <span className="field-hint">{t('dialogs.transferMinimum', { min })}</span>
        </label>
        <FormError intent="transfer" />
        <DialogActions intent="transfer" label={t('dialogs.confirm')} />
      </Form>
    </UrlDialog>
  );
}

/** The current password, asked for when the account has one (ADR 016). */
function CurrentPasswordField({ name }: { name: string }) {
  const { t } = useTranslation('settings');
  return (
    <label>
      {t('dialogs.currentPassword')}
      <input type="password" name={name} autoComplete="current-password" maxLength={64} required />
    </label>
  );
}

function PasswordDialog({ hasPassword }: { hasPassword: boolean }) {
  const { t } = useTranslation('settings');
  return (
    <UrlDialog id="password" title={t('dialogs.passwordTitle')} closeTo={PERSONAL}>
      <Form method="post" action={`${PERSONAL}&dialog=password`} className="settings-form">
        {hasPassword ? <CurrentPasswordField name="original_password" /> : null}
        <label>
          {t('dialogs.newPassword')}
          <input
            type="password"
            name="password"
            autoComplete="new-password"
            minLength={8}
            maxLength={64}
            required
          />
        </label>
        <label>
          {t('dialogs.confirmPassword')}
          <input
            type="password"
            name="password2"
            autoComplete="new-password"
            minLength={8}
            maxLength={64}
            required
          />
        </label>
        <FormError intent="password" />
        <DialogActions intent="password" label={t('dialogs.confirm')} />
      </Form>
    </UrlDialog>
  );
}

function DeleteDialog({ username, hasPassword }: { username: string; hasPassword: boolean }) {
  const { t } = useTranslation('settings');
  return (
    <UrlDialog id="delete" title={t('dialogs.deleteTitle')} closeTo={PERSONAL}>
      <Form method="post" action={`${PERSONAL}&dialog=delete`} className="settings-form">
        <p className="form-error">{t('dialogs.deleteWarning')}</p>
        <label>
          {t('dialogs.deleteConfirmLabel', { username })}
          <input type="text" name="confirm" autoComplete="off" required />
        </label>
        {hasPassword ? <CurrentPasswordField name="password" /> : null}
        <FormError intent="delete" />
        <DialogActions intent="delete" label={t('info.deleteAccount')} danger />
      </Form>
    </UrlDialog>
  );
}

const RESEND_SECONDS = 30;

function EmailDialog({ data, email: initialEmail }: { data: PersonalTabData; email: string }) {
  const { t } = useTranslation('settings');
  const hydrated = useHydrated();
  const api = useApiClient();
  const { notify } = useToast();
  const location = useLocation();
  const [email, setEmail] = useState(initialEmail);
  const [seconds, setSeconds] = useState(0);
  const sendReply = useReply('sendEmailCode');
  useEffect(() => {
    if (seconds <= 0) return;
    const timer = setTimeout(() => setSeconds((s) => s - 1), 1000);
    return () => clearTimeout(timer);
  }, [seconds]);
  useEffect(() => setEmail(initialEmail), [initialEmail, location.key]);

  async function sendCode() {
    if (!email.trim()) {
      notify({ type: 'error', message: t('errors.emailRequired') });
      return;
    }
    setSeconds(RESEND_SECONDS);
    const query = new URLSearchParams({ email: email.trim(), purpose: 'bind' });
    const result = await api.get(`/api/verification?${query}`, {
      headers: { 'New-Api-User': String(data.self.id) },
    });
    if (result.ok) notify({ type: 'success', message: t('toast.codeSent') });
  }

  return (
    <UrlDialog id="email" title={t('dialogs.emailTitle')} closeTo={PERSONAL}>
      <Form method="post" action={`${PERSONAL}&dialog=email`} className="settings-form">
        <label>
          {t('info.email')}
          <input
            type="email"
            name="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder={t('dialogs.emailPlaceholder')}
            required
          />
        </label>
        <div>
          {hydrated ? (
            <Button type="button" onPress={() => void sendCode()} isDisabled={seconds > 0}>
              {seconds > 0 ? t('dialogs.resend', { seconds }) : t('dialogs.sendCode')}
            </Button>
          ) : (
            <Button type="submit" name="intent" value="sendEmailCode" formNoValidate>
              {t('dialogs.sendCode')}
            </Button>
          )}
        </div>
        {sendReply?.error ? (
          <p className="form-error" role="alert">
            {sendReply.error}
          </p>
        ) : null}
        <label>
          {t('dialogs.code')}
          <input type="text" name="code" inputMode="numeric" autoComplete="one-time-code" />
        </label>
        <FormError intent="bindEmail" />
        <DialogActions intent="bindEmail" label={t('info.bindEmail')} />
      </Form>
    </UrlDialog>
  );
}

function WechatDialog({ data }: { data: PersonalTabData }) {
  const { t } = useTranslation('settings');
  return (
    <UrlDialog id="wechat" title={t('dialogs.wechatTitle')} closeTo={PERSONAL}>
      <Form method="post" action={`${PERSONAL}&dialog=wechat`} className="settings-form">
        {data.wechatQr ? (
          <img className="wechat-qr" src={data.wechatQr} alt={t('dialogs.wechatTitle')} />
        ) : null}
        <p className="field-hint">{t('dialogs.wechatHint')}</p>
        <label>
          {t('dialogs.code')}
          <input type="text" name="code" autoComplete="off" required />
        </label>
        <FormError intent="bindWechat" />
        <DialogActions intent="bindWechat" label={t('info.bindWechat')} />
      </Form>
    </UrlDialog>
  );
}
