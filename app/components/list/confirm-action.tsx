import { Form } from '@remix-run/react';
import type { ReactNode } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';

export type HiddenFields = Record<string, string | number | readonly (string | number)[]>;

/** One hidden input per value (an array field posts the name once per value). */
export function HiddenInputs({ fields }: { fields: HiddenFields }) {
  return (
    <>
      {Object.entries(fields).flatMap(([name, value]) =>
        (Array.isArray(value) ? value : [value]).map((v) => (
          <input key={`${name}-${v}`} type="hidden" name={name} value={v} />
        )),
      )}
    </>
  );
}

export type ConfirmTexts = {
  /** the trigger's text (the row or toolbar button) */
  label: string;
  title: string;
  body: string;
  confirmLabel: string;
  cancelLabel: string;
};

/**
 * The react-aria alertdialog (overlay, title, body, a form posting `fields` to `action` — default: the current
 * route's action — with cancel and confirm). Render it inside a DialogTrigger, which opens it.
 */
export function ConfirmModal({
  title,
  body,
  cancelLabel,
  confirmLabel,
  fields,
  action,
  confirmDisabled,
}: {
  title: string;
  /** a string is one paragraph */
  body: ReactNode;
  cancelLabel: string;
  confirmLabel: string;
  fields: HiddenFields;
  action?: string;
  confirmDisabled?: boolean;
}) {
  return (
    <ModalOverlay isDismissable className="list-overlay">
      <Modal className="list-dialog">
        <Dialog role="alertdialog">
          {({ close }) => (
            <>
              <Heading slot="title">{title}</Heading>
              {typeof body === 'string' ? <p>{body}</p> : body}
              <Form method="post" action={action} onSubmit={() => close()}>
                <HiddenInputs fields={fields} />
                <div className="list-dialog-actions">
                  <Button onPress={close}>{cancelLabel}</Button>
                  <Button type="submit" variant="primary" isDisabled={confirmDisabled}>
                    {confirmLabel}
                  </Button>
                </div>
              </Form>
            </>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

/** A button (JavaScript) opening the ConfirmModal of a destructive action. */
export function ConfirmDialog({
  texts,
  fields,
  action,
  variant = 'ghost',
  isDisabled,
  dataAction,
}: {
  texts: ConfirmTexts;
  fields: HiddenFields;
  action?: string;
  variant?: 'ghost' | 'secondary';
  isDisabled?: boolean;
  dataAction?: string;
}) {
  return (
    <DialogTrigger>
      <Button variant={variant} isDisabled={isDisabled} data-action={dataAction}>
        {texts.label}
      </Button>
      <ConfirmModal {...texts} fields={fields} action={action} />
    </DialogTrigger>
  );
}

/**
 * A destructive action that asks first: without JavaScript a link to its confirm page (`confirmHref`, see
 * ConfirmPage); with it the ConfirmDialog posting `fields` to `action`.
 */
export function ConfirmAction({
  confirmHref,
  linkClassName = 'btn btn-ghost',
  ...dialog
}: Parameters<typeof ConfirmDialog>[0] & { confirmHref: string; linkClassName?: string }) {
  const hydrated = useHydrated();
  if (!hydrated) {
    return (
      <Link to={confirmHref} className={linkClassName}>
        {dialog.texts.label}
      </Link>
    );
  }
  return <ConfirmDialog {...dialog} />;
}

/** `path?redirectTo=back`: the no-JavaScript page of a row action (confirm, edit), which returns to `back`. */
export function withRedirectTo(path: string, back: string, extra?: Record<string, string>): string {
  return `${path}?${new URLSearchParams({ ...extra, redirectTo: back })}`;
}

/**
 * The texts of a row's delete action in an area namespace `ns`, by the areas' shared keys: actions.delete,
 * confirm.deleteTitle, confirm.deleteBody (with `values`), actions.confirmDelete, actions.cancel.
 */
export function useDeleteTexts(ns: string, values: Record<string, string | number>): ConfirmTexts {
  const { t } = useTranslation(ns);
  return {
    label: t('actions.delete'),
    title: t('confirm.deleteTitle'),
    body: t('confirm.deleteBody', values),
    confirmLabel: t('actions.confirmDelete'),
    cancelLabel: t('actions.cancel'),
  };
}
