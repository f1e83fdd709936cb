import type { CSSProperties, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { OS_TYPES, osKey, VERSION_MODAL_WIDTH, type VersionWire } from '#app/domain/versions/constants.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { formatDateTime } from '#app/utils/time.ts';

/** Presentational pieces shared by the /version pages and /download (client-safe: no server imports). */

/** The add/edit modal: width 650 (seed 001 §9). */
export const modalStyle: CSSProperties = {
  position: 'fixed',
  top: '6vh',
  left: '50%',
  transform: 'translateX(-50%)',
  width: `min(${VERSION_MODAL_WIDTH}px, 94vw)`,
  maxHeight: '88vh',
  overflowY: 'auto',
  background: 'var(--surface, #fff)',
  border: '1px solid var(--border)',
  borderRadius: '8px',
  padding: '1.25rem',
  boxShadow: '0 8px 24px rgba(0,0,0,.2)',
};

export const monoStyle: CSSProperties = {
  fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
  wordBreak: 'break-all',
};

/** Form values as the inputs show them (the seed's field names). */
export type VersionFormValues = {
  Version?: string;
  DownUrl?: string;
  FileMd5?: string;
  ForceIds?: string;
  Force?: string;
  OsType?: string;
  Remark?: string;
};

export function toFormValues(v: VersionWire): VersionFormValues {
  return {
    Version: v.version,
    DownUrl: v.downurl,
    FileMd5: v.filemd5,
    ForceIds: v.forceids,
    Force: String(v.force),
    OsType: String(v.os_type),
    Remark: v.remark,
  };
}

export type FieldErrors = Record<string, string[] | undefined>;

function FieldError({ id, errors }: { id: string; errors?: string[] }) {
  if (!errors?.length) return null;
  return (
    <small id={id} className="field-error">
      {errors.join(' ')}
    </small>
  );
}

function TextField({
  label,
  name,
  values,
  errors,
  placeholder,
  mono,
  type = 'text',
}: {
  label: string;
  name: keyof VersionFormValues;
  values?: VersionFormValues;
  errors?: FieldErrors;
  placeholder?: string;
  mono?: boolean;
  type?: string;
}) {
  const id = `version-${name}`;
  const err = errors?.[name];
  return (
    <div className="list-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        defaultValue={values?.[name] ?? ''}
        placeholder={placeholder}
        autoComplete="off"
        aria-invalid={err?.length ? true : undefined}
        aria-describedby={err?.length ? `${id}-error` : undefined}
        className="list-input"
        style={mono ? monoStyle : undefined}
      />
      <FieldError id={`${id}-error`} errors={err} />
    </div>
  );
}

/** The version form's fields (seed 001 §3: Version, DownUrl, FileMd5, ForceIds, Force, OsType, Remark). */
export function VersionFields({ values, errors }: { values?: VersionFormValues; errors?: FieldErrors }) {
  const { t } = useTranslation('versions');
  return (
    <>
      <div className="list-field">
        <label htmlFor="version-OsType">{t('form.osType')}</label>
        <select id="version-OsType" name="OsType" defaultValue={values?.OsType ?? '1'} className="list-input">
          {OS_TYPES.map((os) => (
            <option key={os} value={os}>
              {t(`os.${osKey(os)}`)}
            </option>
          ))}
        </select>
        <FieldError id="version-OsType-error" errors={errors?.OsType} />
      </div>
      <TextField
        label={t('form.version')}
        name="Version"
        values={values}
        errors={errors}
        placeholder={t('form.versionPlaceholder')}
      />
      <TextField
        label={t('form.downUrl')}
        name="DownUrl"
        type="url"
        values={values}
        errors={errors}
        placeholder={t('form.downUrlPlaceholder')}
      />
      <TextField
        label={t('form.fileMd5')}
        name="FileMd5"
        values={values}
        errors={errors}
        placeholder={t('form.fileMd5Placeholder')}
        mono
      />
      <TextField
        label={t('form.forceIds')}
        name="ForceIds"
        values={values}
        errors={errors}
        placeholder={t('form.forceIdsPlaceholder')}
      />
      <fieldset className="list-field list-fieldset">
        <legend>{t('form.force')}</legend>
        <div style={{ display: 'flex', gap: '1rem' }}>
          {(['1', '0'] as const).map((v) => (
            <label key={v} style={{ display: 'inline-flex', gap: '0.3rem', alignItems: 'center' }}>
              <input type="radio" name="Force" value={v} defaultChecked={(values?.Force ?? '0') === v} />
              {t(v === '1' ? 'force.yes' : 'force.no')}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="list-field">
        <label htmlFor="version-Remark">{t('form.remark')}</label>
        <textarea
          id="version-Remark"
          name="Remark"
          rows={5}
          defaultValue={values?.Remark ?? ''}
          className="list-input list-input-vertical"
        />
        <small>{t('form.remarkHint')}</small>
        <FieldError id="version-Remark-error" errors={errors?.Remark} />
      </div>
    </>
  );
}

export { FormError } from '#app/components/list/form-error.tsx';

export function OsLabel({ osType }: { osType: number }) {
  const { t } = useTranslation('versions');
  return <span data-os-type={osType}>{t(`os.${osKey(osType)}`)}</span>;
}

/** The remark as the server sanitized it (`versionView(...).remark_html`, ADR 032). */
export function Remark({ html, style }: { html: string; style?: CSSProperties }) {
  if (!html.trim()) return null;
  return <div className="version-remark" style={style} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** An MD5 in monospace; with JavaScript a copy button (toast 'copied: {text}' or the manual-copy message). */
export function Md5({ value, label }: { value: string; label?: ReactNode }) {
  const { t } = useTranslation('versions');
  const hydrated = useHydrated();
  const { notify } = useToast();
  if (!value) return <span>-</span>;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      notify({ type: 'success', message: t('toast.copied', { text: value }) });
    } catch {
      notify({ type: 'error', message: `${t('toast.copyFailed')}: ${value}` });
    }
  };
  return (
    <span style={{ display: 'inline-flex', gap: '0.4rem', alignItems: 'center', flexWrap: 'wrap' }}>
      {label}
      <code data-testid="md5" style={monoStyle}>
        {value}
      </code>
      {hydrated ? (
        <Button variant="ghost" onPress={() => void copy()} aria-label={`${t('actions.copy')} MD5`}>
          {t('actions.copy')}
        </Button>
      ) : null}
    </span>
  );
}

/** An ISO date as 'YYYY-MM-DD HH:mm:ss' in the user's zone (app/utils/time.ts); unparsable text as is. */
export function formatDate(iso: string, timeZone: string): string {
  return formatDateTime(iso, timeZone) || iso;
}

/**
 * Route error boundary of the /version pages: the 403 page for non-admins; otherwise the page's fixed failure
 * message (seed 001 §8: 'load version list failed' for the list, 'load version info failed' for one version).
 */
export function VersionsErrorBoundary({
  failedKey = 'errors.loadInfoFailed',
}: {
  failedKey?: 'errors.loadInfoFailed' | 'errors.loadListFailed';
}) {
  return <ListErrorBoundary ns="versions" failedKey={failedKey} />;
}
