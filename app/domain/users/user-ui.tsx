import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';

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
    <div className="list-field">
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
        className={readOnly ? 'list-input list-input-readonly' : 'list-input'}
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

export { FormError } from '#app/components/list/form-error.tsx';

/** Route error boundary of the /user pages: the 403 page for non-admins, the generic error page otherwise. */
export function UsersErrorBoundary() {
  return <ListErrorBoundary ns="users" />;
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
          <div className="list-field">
            <label htmlFor="field-group">{t('form.group')}</label>
            <select id="field-group" name="group" defaultValue={user.group} className="list-input">
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
