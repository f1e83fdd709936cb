import { isRouteErrorResponse, useRouteError } from '@remix-run/react';
import type { CSSProperties, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** Small presentational pieces shared by the /user pages (client-safe: no server imports). */

export function roleKey(role: number): 'user' | 'admin' | 'root' | 'unknown' {
  if (role === 1) return 'user';
  if (role === 10) return 'admin';
  if (role === 100) return 'root';
  return 'unknown';
}

export function RoleTag({ role }: { role: number }) {
  const { t } = useTranslation('users');
  const key = roleKey(role);
  return (
    <span
      className="badge badge-info"
      data-role={role}
      style={{ color: key === 'root' ? 'var(--danger)' : undefined }}
    >
      {t(`role.${key}`)}
    </span>
  );
}

export function StatusTag({ status, deleted }: { status: number; deleted: boolean }) {
  const { t } = useTranslation('users');
  const key = deleted ? 'deleted' : status === 1 ? 'enabled' : status === 2 ? 'banned' : 'unknown';
  return (
    <span
      className="badge"
      data-status={key}
      style={{ color: key === 'enabled' ? 'var(--info)' : undefined }}
    >
      {t(`status.${key}`)}
    </span>
  );
}

export const fieldStyle: CSSProperties = {
  display: 'flex',
  flexDirection: 'column',
  gap: '0.25rem',
  marginBottom: '0.75rem',
};
export const inputStyle: CSSProperties = {
  padding: '0.4rem 0.5rem',
  border: '1px solid var(--border)',
  borderRadius: '6px',
  background: 'var(--surface)',
  color: 'inherit',
  font: 'inherit',
};

export function Field({
  label,
  name,
  defaultValue,
  type = 'text',
  placeholder,
  readOnly,
  hint,
  autoComplete,
  required,
}: {
  label: string;
  name: string;
  defaultValue?: string | number;
  type?: string;
  placeholder?: string;
  readOnly?: boolean;
  hint?: ReactNode;
  autoComplete?: string;
  required?: boolean;
}) {
  const id = `field-${name}`;
  return (
    <div style={fieldStyle}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={readOnly ? undefined : name}
        type={type}
        defaultValue={defaultValue}
        placeholder={placeholder}
        readOnly={readOnly}
        aria-readonly={readOnly || undefined}
        autoComplete={autoComplete}
        required={required}
        style={{ ...inputStyle, opacity: readOnly ? 0.7 : 1 }}
      />
      {hint ? <small>{hint}</small> : null}
    </div>
  );
}

/** The add-user fields (seed §2: username, display_name, password). */
export function CreateUserFields({ values }: { values?: Record<string, string> }) {
  const { t } = useTranslation('users');
  return (
    <>
      <Field
        label={t('form.username')}
        name="username"
        placeholder={t('form.usernamePlaceholder')}
        defaultValue={values?.username}
        autoComplete="off"
      />
      <Field
        label={t('form.displayName')}
        name="display_name"
        placeholder={t('form.displayNamePlaceholder')}
        defaultValue={values?.display_name}
        autoComplete="off"
      />
      <Field
        label={t('form.password')}
        name="password"
        type="password"
        placeholder={t('form.passwordAddPlaceholder')}
        autoComplete="new-password"
      />
    </>
  );
}

export function FormError({ message }: { message?: string | null }) {
  if (!message) return null;
  return (
    <p role="alert" className="form-error" style={{ color: 'var(--danger)' }}>
      {message}
    </p>
  );
}

export const drawerStyle: CSSProperties = {
  position: 'fixed',
  top: 0,
  right: 0,
  bottom: 0,
  width: 'min(420px, 100vw)',
  background: 'var(--surface, #fff)',
  borderLeft: '1px solid var(--border)',
  padding: '1.25rem',
  overflowY: 'auto',
  boxShadow: '-4px 0 16px rgba(0,0,0,.15)',
};

export const overlayStyle: CSSProperties = {
  position: 'fixed',
  inset: 0,
  background: 'rgba(0,0,0,.35)',
  zIndex: 50,
};

export const dialogStyle: CSSProperties = {
  position: 'fixed',
  top: '20%',
  left: '50%',
  transform: 'translateX(-50%)',
  width: 'min(440px, 92vw)',
  background: 'var(--surface, #fff)',
  border: '1px solid var(--border)',
  borderRadius: '8px',
  padding: '1.25rem',
  boxShadow: '0 8px 24px rgba(0,0,0,.2)',
};

/** Route error boundary of the /user pages: the 403 page for non-admins, the generic error page otherwise. */
export function UsersErrorBoundary() {
  const error = useRouteError();
  const { t } = useTranslation('users');
  const { t: tc } = useTranslation('common');
  if (isRouteErrorResponse(error) && error.status === 403) {
    return (
      <div className="page error-page" data-status="403">
        <h1>{t('forbidden.title')}</h1>
        <p>{t('forbidden.body')}</p>
      </div>
    );
  }
  if (isRouteErrorResponse(error) && error.status === 404) {
    return (
      <div className="page error-page" data-status="404">
        <h1>{tc('notFound.title')}</h1>
        <p>{tc('notFound.body')}</p>
      </div>
    );
  }
  if (!isRouteErrorResponse(error)) console.error(error);
  return (
    <div className="page error-page">
      <h1>{tc('errorPage.title')}</h1>
      <p>{tc('errorPage.body')}</p>
    </div>
  );
}

/** What the edit form needs of a user (the wire format's visible fields). */
export type EditableUser = {
  id: number;
  username: string;
  display_name: string;
  group: string;
  quota: number;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
  email: string;
};

/**
 * The edit-user fields (seed §2): username, display name, password (write only, blank), group and quota only
 * when editing another user, and the bound identifiers read-only (they carry no name, so they are not posted).
 */
export function EditUserFields({
  user,
  groups,
  self,
}: {
  user: EditableUser;
  groups: string[];
  self: boolean;
}) {
  const { t } = useTranslation('users');
  const groupOptions = groups.includes(user.group) ? groups : [user.group, ...groups];
  return (
    <>
      <Field label={t('form.username')} name="username" defaultValue={user.username} autoComplete="off" />
      <Field
        label={t('form.displayName')}
        name="display_name"
        defaultValue={user.display_name}
        autoComplete="off"
      />
      <Field
        label={t('form.password')}
        name="password"
        type="password"
        defaultValue=""
        placeholder={t('form.passwordPlaceholder')}
        autoComplete="new-password"
      />
      {self ? null : (
        <>
          <div style={fieldStyle}>
            <label htmlFor="field-group">{t('form.group')}</label>
            <select id="field-group" name="group" defaultValue={user.group} style={inputStyle}>
              {groupOptions.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </div>
          <Field
            label={t('form.quota')}
            name="quota"
            type="number"
            defaultValue={user.quota}
            hint={t('form.quotaHint')}
          />
        </>
      )}
      <Field
        label={t('form.githubId')}
        name="github_id"
        defaultValue={user.github_id}
        readOnly
        hint={t('form.readonlyHint')}
      />
      <Field label={t('form.wechatId')} name="wechat_id" defaultValue={user.wechat_id} readOnly />
      <Field label={t('form.telegramId')} name="telegram_id" defaultValue={user.telegram_id} readOnly />
      <Field label={t('form.email')} name="email" defaultValue={user.email} readOnly />
    </>
  );
}
