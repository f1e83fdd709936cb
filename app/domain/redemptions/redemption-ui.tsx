import { Form } from '@remix-run/react';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import {
  CODES_FILE_NAME,
  codesFileText,
  DEFAULT_REDEMPTION_COUNT,
  DEFAULT_REDEMPTION_QUOTA,
  MAX_REDEMPTION_COUNT,
  maskKey,
  QUICK_QUOTA_AMOUNTS,
  redemptionStatusKey,
} from '#app/domain/redemptions/constants.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { formatTimestamp } from '#app/utils/time.ts';

/** Presentational pieces of the /redemption pages (client-safe: no server imports). */

export { FormError } from '#app/domain/users/user-ui.tsx';

export function RedemptionStatusTag({ status }: { status: number }) {
  const { t } = useTranslation('redemptions');
  const key = redemptionStatusKey(status);
  const color =
    key === 'unused' ? 'var(--success, #16a34a)' : key === 'disabled' ? 'var(--danger)' : undefined;
  return (
    <span className="badge" data-status={key} style={{ color }}>
      {t(`status.${key}`)}
    </span>
  );
}

/** Unix seconds as 'YYYY-MM-DD HH:mm:ss' in the user's zone (app/utils/time.ts); 0 is '-'. */
export function formatTime(seconds: number, timeZone: string): string {
  if (!seconds) return '-';
  return formatTimestamp(seconds, timeZone);
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A copy button (JavaScript only; without it the key is readable in the <details> next to it). */
export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  const [copied, setCopied] = useState(false);
  if (!hydrated) return null;
  return (
    <Button
      variant="ghost"
      data-action="copy"
      onPress={async () => {
        setCopied(await copyText(text));
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? t('actions.copied') : (label ?? t('actions.copy'))}
    </Button>
  );
}

/** The table cell of a key: masked, the full key behind a disclosure, and a copy button with JavaScript. */
export function KeyCell({ code }: { code: string }) {
  const { t } = useTranslation('redemptions');
  return (
    <div style={{ display: 'flex', alignItems: 'center', gap: '0.25rem', flexWrap: 'wrap' }}>
      <code data-testid="masked-key">{maskKey(code)}</code>
      <details>
        <summary>{t('actions.show')}</summary>
        <code data-testid="full-key">{code}</code>
      </details>
      <CopyButton text={code} />
    </div>
  );
}

/**
 * The create / edit fields: name, quota (with the token editor's quick amounts: buttons with JavaScript, a
 * datalist without) and, on create, the number of codes.
 */
export function RedemptionFields({
  mode,
  values,
  display,
}: {
  mode: 'create' | 'edit';
  values?: { name?: string; quota?: string | number; count?: string | number };
  display: QuotaDisplay;
}) {
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  const quotaRef = useRef<HTMLInputElement>(null);
  const [quota, setQuota] = useState(String(values?.quota ?? DEFAULT_REDEMPTION_QUOTA));
  return (
    <>
      <div className="list-field">
        <label htmlFor="redemption-name">{t('form.name')}</label>
        <input
          id="redemption-name"
          name="name"
          defaultValue={values?.name ?? ''}
          placeholder={t('form.namePlaceholder')}
          autoComplete="off"
          className="list-input"
        />
      </div>
      <div className="list-field">
        <label htmlFor="redemption-quota">{t('form.quota')}</label>
        <input
          id="redemption-quota"
          ref={quotaRef}
          name="quota"
          type="number"
          min={1}
          step={1}
          value={quota}
          onChange={(e) => setQuota(e.target.value)}
          list="redemption-quick-amounts"
          placeholder={t('form.quotaPlaceholder')}
          className="list-input"
        />
        <small data-testid="quota-preview">
          {/^\d+$/.test(quota) ? formatQuota(Number(quota), display) : ''}
        </small>
        <datalist id="redemption-quick-amounts">
          {QUICK_QUOTA_AMOUNTS.map((a) => (
            <option key={a.quota} value={a.quota} label={a.label} />
          ))}
        </datalist>
        {hydrated ? (
          <fieldset
            style={{ display: 'flex', gap: '0.25rem', flexWrap: 'wrap', border: 0, padding: 0, margin: 0 }}
          >
            <legend style={{ fontSize: '0.85em', marginBottom: '0.25rem', width: '100%' }}>
              {t('form.quickAmounts')}
            </legend>
            {QUICK_QUOTA_AMOUNTS.map((a) => (
              <Button key={a.quota} variant="ghost" onPress={() => setQuota(String(a.quota))}>
                {a.label}
              </Button>
            ))}
          </fieldset>
        ) : null}
      </div>
      {mode === 'create' ? (
        <div className="list-field">
          <label htmlFor="redemption-count">{t('form.count')}</label>
          <input
            id="redemption-count"
            name="count"
            type="number"
            min={1}
            max={MAX_REDEMPTION_COUNT}
            step={1}
            defaultValue={String(values?.count ?? DEFAULT_REDEMPTION_COUNT)}
            placeholder={t('form.countPlaceholder')}
            className="list-input"
          />
        </div>
      ) : null}
    </>
  );
}

/** Saves the codes as a text file in the browser (a Blob; nothing leaves the page). */
function downloadBlob(keys: readonly string[]) {
  const url = URL.createObjectURL(new Blob([codesFileText(keys)], { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = CODES_FILE_NAME;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * The freshly generated codes, shown once, with a download: with JavaScript a Blob; without, a POST of the codes
 * to /redemption/download, which answers the file as an attachment (the keys never go into a cookie or a URL).
 */
export function FreshCodes({ keys }: { keys: readonly string[] }) {
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  return (
    <section aria-labelledby="fresh-codes-title" data-testid="fresh-codes">
      <h2 id="fresh-codes-title">{t('created.title')}</h2>
      <p>{t('created.body', { count: keys.length })}</p>
      <textarea
        readOnly
        aria-label={t('created.title')}
        value={keys.join('\n')}
        rows={Math.min(10, Math.max(2, keys.length))}
        className="list-input list-input-full list-input-mono"
      />
      <div style={{ display: 'flex', gap: '0.5rem', marginTop: '0.5rem', flexWrap: 'wrap' }}>
        {hydrated ? (
          <>
            <Button variant="primary" data-action="download" onPress={() => downloadBlob(keys)}>
              {t('actions.download')}
            </Button>
            <CopyButton text={keys.join('\n')} label={t('actions.copyAll')} />
          </>
        ) : (
          <Form method="post" action="/redemption/download" reloadDocument>
            <input type="hidden" name="keys" value={keys.join('\n')} />
            <Button type="submit" variant="primary" data-action="download">
              {t('actions.download')}
            </Button>
          </Form>
        )}
      </div>
    </section>
  );
}

/** Route error boundary of the /redemption pages: the 403 page for non-admins, the generic error page otherwise. */
export function RedemptionsErrorBoundary() {
  return <ListErrorBoundary ns="redemptions" />;
}
