import { type ReactNode, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

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
  display,
}: {
  user: EditableUser;
  groups: string[];
  self: boolean;
  /** the quota display rules (seed 000 §9): the quota shown as currency next to the field, and add-quota */
  display?: QuotaDisplay;
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
            hint={
              display ? (
                <>
                  {t('form.quotaHint')} ·{' '}
                  <span data-testid="quota-display">{formatQuota(user.quota, display)}</span>
                </>
              ) : (
                t('form.quotaHint')
              )
            }
          />
          {display ? <AddQuotaControl quota={user.quota} display={display} /> : null}
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

/**
 * Add quota (a delta, negative allowed) without leaving the edit form, so nothing typed is lost. With
 * JavaScript a dialog shows old + added = new in the display rules and, on confirm, puts the new quota into
 * the form's quota field (saved with the form, as new-api's editor does). Without JavaScript a disclosure in
 * the same form: its button submits every field with `add_quota`, which the update applies to the stored quota.
 */
export function AddQuotaControl({ quota, display }: { quota: number; display: QuotaDisplay }) {
  const { t } = useTranslation('users');
  const hydrated = useHydrated();
  const [added, setAdded] = useState('');
  const [base, setBase] = useState(quota);
  const delta = /^-?\d+$/.test(added.trim()) ? Number(added.trim()) : 0;
  if (!hydrated) {
    return (
      <details className="add-quota">
        <summary className="btn btn-ghost">{t('actions.addQuota')}</summary>
        <p>{t('form.addQuotaKeepHint')}</p>
        <div className="list-field">
          <label htmlFor="field-add_quota">{t('form.addQuotaLabel')}</label>
          <input id="field-add_quota" name="add_quota" type="number" step={1} className="list-input" />
        </div>
        <button type="submit" name="intent" value="update" className="btn btn-primary">
          {t('actions.addQuota')}
        </button>
      </details>
    );
  }
  const field = () => document.getElementById('field-quota') as HTMLInputElement | null;
  return (
    <DialogTrigger
      onOpenChange={(open) => {
        if (!open) return;
        // the field's value as edited so far, not the stored one
        const current = Number(field()?.value);
        setBase(Number.isSafeInteger(current) ? current : quota);
        setAdded('');
      }}
    >
      <Button variant="ghost" data-action="add-quota">
        {t('actions.addQuota')}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog">
          <Dialog>
            {({ close }) => (
              <>
                <Heading slot="title">{t('form.addQuotaTitle')}</Heading>
                <div className="list-field">
                  <label htmlFor="field-add_quota">{t('form.addQuotaLabel')}</label>
                  <input
                    id="field-add_quota"
                    type="number"
                    step={1}
                    value={added}
                    onChange={(e) => setAdded(e.target.value)}
                    className="list-input"
                  />
                  <output data-testid="quota-formula" htmlFor="field-add_quota">
                    {t('form.addQuotaFormula', {
                      old: formatQuota(base, display),
                      added: formatQuota(delta, display),
                      new: formatQuota(base + delta, display),
                    })}
                  </output>
                  <small>{t('form.addQuotaApplyHint')}</small>
                </div>
                <div className="list-dialog-actions">
                  <Button onPress={close}>{t('actions.cancel')}</Button>
                  <Button
                    variant="primary"
                    onPress={() => {
                      const input = field();
                      if (input) input.value = String(base + delta);
                      close();
                    }}
                  >
                    {t('actions.addQuota')}
                  </Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}
