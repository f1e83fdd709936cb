import { type CSSProperties, type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { toDateTimeLocal } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';
import { COUNT_PRESETS, DEFAULT_TOKEN_QUOTA, QUICK_QUOTAS } from './constants.ts';

/** Presentational pieces of the /token pages (client-safe: no server imports). */
export {
  FormError,
  UsersErrorBoundary as TokensErrorBoundary,
} from '#app/domain/users/user-ui.tsx';

export function TokenStatusTag({ status, modelLimited }: { status: number; modelLimited: boolean }) {
  const { t } = useTranslation('tokens');
  const known = status >= 1 && status <= 4;
  const colors: Record<number, string> = {
    1: 'var(--success, green)',
    2: 'var(--danger, red)',
    // theme colours with at least 4.5:1 on the badge in light and dark (axe color-contrast)
    3: 'var(--warning)',
    4: 'var(--text-muted)',
  };
  return (
    <span className="badge" data-status={status} style={{ color: colors[status] }}>
      {known ? t(`status.${status as 1 | 2 | 3 | 4}`) : t('status.unknown')}
      {status === 1 && modelLimited ? ` (${t('status.modelLimited')})` : ''}
    </span>
  );
}

/** The form values of the editor (strings, as a form posts them). */
export type TokenFormValues = {
  name: string;
  remain_quota: string;
  unlimited_quota: boolean;
  expiry_text: string;
  /** the stored expiry (unix seconds, -1 never; 0 = take expiry_text as is) — shown in the browser's zone with JS */
  expired_time: number;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
};

export const emptyTokenForm: TokenFormValues = {
  name: '',
  remain_quota: String(DEFAULT_TOKEN_QUOTA),
  unlimited_quota: false,
  expiry_text: '',
  expired_time: -1,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  group: '',
};

const row: CSSProperties = { display: 'flex', flexWrap: 'wrap', gap: '0.5rem', alignItems: 'center' };

/**
 * The token editor's fields (seed 001 §5 Token form, §9): name, expiry presets + a datetime field, quota with
 * quick amounts, unlimited, model limits, IP allow-list, group, and (on create) the batch count.
 * Without JavaScript the presets are selects the server applies; with JavaScript they fill the fields at once.
 */
export function TokenFields({
  values,
  models,
  groups,
  create,
  display,
}: {
  values: TokenFormValues;
  models: string[];
  groups: Record<string, string>;
  create: boolean;
  display: QuotaDisplay;
}) {
  const { t } = useTranslation('tokens');
  const hydrated = useHydrated();
  const [quota, setQuota] = useState(values.remain_quota);
  const [expiry, setExpiry] = useState(values.expiry_text);
  const groupNames = Object.keys(groups);
  const quotaNumber = /^\d+$/.test(quota.trim()) ? Number(quota.trim()) : 0;

  // The datetime field shows (and the server reads) the time in the user's zone (the tz cookie).
  const timeZone = useTimeZone();
  useEffect(() => {
    if (values.expired_time > 0) setExpiry(toDateTimeLocal(values.expired_time, timeZone));
  }, [values.expired_time, timeZone]);

  function applyExpiryPreset(seconds: number) {
    setExpiry(seconds < 0 ? '' : toDateTimeLocal(Math.floor(Date.now() / 1000) + seconds, timeZone));
  }

  return (
    <>
      <div className="list-field">
        <label htmlFor="token-name">{t('form.name')}</label>
        <input
          id="token-name"
          name="name"
          defaultValue={values.name}
          placeholder={t('form.namePlaceholder')}
          autoComplete="off"
          className="list-input"
        />
      </div>

      <fieldset className="list-field list-fieldset">
        <legend>{t('form.expiry')}</legend>
        <div className="list-field">
          <label htmlFor="token-expiry">{t('form.expiryTime')}</label>
          <input
            id="token-expiry"
            name="expired_time"
            type="datetime-local"
            value={expiry}
            onChange={(e) => setExpiry(e.target.value)}
            className="list-input"
          />
          <small>{t('form.expiryHint')}</small>
        </div>
        {hydrated ? (
          <fieldset style={{ ...row, border: 0, padding: 0 }} aria-label={t('form.expiryPreset')}>
            {(
              [
                ['expiryNever', -1],
                ['expiryHour', 3600],
                ['expiryDay', 86400],
                ['expiryMonth', 30 * 86400],
              ] as const
            ).map(([key, seconds]) => (
              <button
                key={key}
                type="button"
                className="btn btn-ghost"
                onClick={() => applyExpiryPreset(seconds)}
              >
                {t(`form.${key}`)}
              </button>
            ))}
          </fieldset>
        ) : (
          <div className="list-field">
            <label htmlFor="token-expiry-preset">{t('form.expiryPreset')}</label>
            <select id="token-expiry-preset" name="expiry_preset" defaultValue="" className="list-input">
              <option value="">{t('form.expiryCustom')}</option>
              <option value="never">{t('form.expiryNever')}</option>
              <option value="hour">{t('form.expiryHour')}</option>
              <option value="day">{t('form.expiryDay')}</option>
              <option value="month">{t('form.expiryMonth')}</option>
            </select>
          </div>
        )}
      </fieldset>

      <div className="list-field">
        <label htmlFor="token-quota">{t('form.quota')}</label>
        <input
          id="token-quota"
          name="remain_quota"
          type="number"
          min={0}
          step={1}
          value={quota}
          onChange={(e) => setQuota(e.target.value)}
          className="list-input"
        />
        <small>
          {t('form.quotaHint', { amount: formatQuota(quotaNumber, { ...display, displayInCurrency: true }) })}
        </small>
        {hydrated ? (
          <fieldset style={{ ...row, border: 0, padding: 0 }} aria-label={t('form.quotaPreset')}>
            {QUICK_QUOTAS.map((q) => (
              <button key={q} type="button" className="btn btn-ghost" onClick={() => setQuota(String(q))}>
                {`$${q / 500000}`}
              </button>
            ))}
          </fieldset>
        ) : (
          <>
            <label htmlFor="token-quota-preset">{t('form.quotaPreset')}</label>
            <select id="token-quota-preset" name="quota_preset" defaultValue="" className="list-input">
              <option value="">{t('form.quotaPresetNone')}</option>
              {QUICK_QUOTAS.map((q) => (
                <option key={q} value={q}>{`$${q / 500000} (${q})`}</option>
              ))}
            </select>
          </>
        )}
      </div>

      <label style={{ ...row, marginBottom: '0.75rem' }}>
        <input type="checkbox" name="unlimited_quota" value="true" defaultChecked={values.unlimited_quota} />
        {t('form.unlimitedQuota')}
      </label>

      <label style={{ ...row, marginBottom: '0.5rem' }}>
        <input
          type="checkbox"
          name="model_limits_enabled"
          value="true"
          defaultChecked={values.model_limits_enabled}
        />
        {t('form.modelLimitsEnabled')}
      </label>
      <div className="list-field">
        <label htmlFor="token-models">{t('form.modelLimits')}</label>
        <input
          id="token-models"
          name="model_limits"
          defaultValue={values.model_limits}
          list="token-model-options"
          autoComplete="off"
          className="list-input"
        />
        <datalist id="token-model-options">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
        {models.length > 0 ? <small>{t('form.modelLimitsHint', { models: models.join(', ') })}</small> : null}
      </div>

      <div className="list-field">
        <label htmlFor="token-ips">{t('form.allowIps')}</label>
        <textarea
          id="token-ips"
          name="allow_ips"
          rows={3}
          defaultValue={values.allow_ips}
          className="list-input"
        />
      </div>

      <div className="list-field">
        <label htmlFor="token-group">{t('form.group')}</label>
        <select
          id="token-group"
          name="group"
          defaultValue={values.group}
          disabled={groupNames.length === 0}
          className="list-input"
        >
          <option value="">{t('form.groupDefault')}</option>
          {groupNames.map((g) => (
            <option key={g} value={g}>
              {groups[g] && groups[g] !== g ? `${g} (${groups[g]})` : g}
            </option>
          ))}
        </select>
        {groupNames.length === 0 ? (
          <small data-testid="groups-not-set">{t('form.groupsNotSet')}</small>
        ) : null}
      </div>

      {create ? (
        <div className="list-field">
          <label htmlFor="token-count">{t('form.count')}</label>
          <input
            id="token-count"
            name="count"
            type="number"
            min={1}
            max={100}
            step={1}
            defaultValue={1}
            list="token-count-presets"
            className="list-input"
          />
          <datalist id="token-count-presets">
            {COUNT_PRESETS.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
          <small>{t('form.countHint')}</small>
        </div>
      ) : null}
    </>
  );
}

/**
 * A full token key in a read-only field to select by hand, and with JavaScript a copy button announcing the
 * result (on failure the field stays selected for a manual copy, seed 001 §8).
 */
export function KeyField({
  id,
  name,
  value,
  testId,
}: {
  id: string;
  name: string;
  value: string;
  testId?: string;
}) {
  const { t } = useTranslation('tokens');
  const hydrated = useHydrated();
  const [status, setStatus] = useState('');
  return (
    <div className="token-key-field">
      <label htmlFor={id}>{t('key.body', { name })}</label>
      <div className="token-key-row">
        <input
          id={id}
          readOnly
          value={value}
          data-testid={testId}
          className="list-input list-input-full list-input-mono"
          onFocus={(e) => e.currentTarget.select()}
        />
        {hydrated ? (
          <Button
            variant="primary"
            data-action="copy-key"
            aria-label={t('key.copyNamed', { name })}
            onPress={async () => {
              try {
                await navigator.clipboard.writeText(value);
                setStatus(t('key.copiedShort'));
              } catch {
                (document.getElementById(id) as HTMLInputElement | null)?.select();
                setStatus(t('key.copyFailed'));
              }
            }}
          >
            {t('actions.copy')}
          </Button>
        ) : null}
      </div>
      <p role="status" className="token-key-status" data-testid="copy-key-status">
        {status}
      </p>
    </div>
  );
}

/** The drawer after a create: every new key once, each with its copy button, and a button to finish. */
export function CreatedKeys({
  keys,
  close,
  heading,
}: {
  keys: { id: number; name: string; key: string }[];
  close: () => void;
  heading: ReactNode;
}) {
  const { t } = useTranslation('tokens');
  return (
    <div data-testid="created-keys">
      {heading}
      <p>{t('key.createdBody')}</p>
      {keys.map((k) => (
        <KeyField key={k.id} id={`created-key-${k.id}`} name={k.name} value={k.key} testId="created-key" />
      ))}
      <div className="list-dialog-actions">
        <Button variant="primary" onPress={close} data-action="done">
          {t('actions.done')}
        </Button>
      </div>
    </div>
  );
}
