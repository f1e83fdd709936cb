import { Form } from '@remix-run/react';
import type { ReactNode } from 'react';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { type HiddenFields, HiddenInputs } from './confirm-action.tsx';

/**
 * The confirmation step of a destructive action without JavaScript: a heading, the body, and a form posting
 * `redirectTo` (plus `fields`) to this route's action, with a cancel link back to `redirectTo`.
 */
export function ConfirmPage({
  className,
  title,
  body,
  redirectTo,
  cancelLabel,
  confirmLabel,
  fields,
  action,
  confirmDisabled,
}: {
  className: string;
  title: string;
  body: ReactNode;
  redirectTo: string;
  cancelLabel: string;
  confirmLabel: string;
  fields?: HiddenFields;
  /** where the form posts (default: this route's action) */
  action?: string;
  confirmDisabled?: boolean;
}) {
  return (
    <div className={`page confirm-page ${className}`}>
      <h1>{title}</h1>
      {typeof body === 'string' ? <p>{body}</p> : body}
      <Form method="post" action={action} className="confirm-page-actions">
        {fields ? <HiddenInputs fields={fields} /> : null}
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <Link to={redirectTo} className="btn btn-secondary">
          {cancelLabel}
        </Link>
        <Button type="submit" variant="primary" isDisabled={confirmDisabled}>
          {confirmLabel}
        </Button>
      </Form>
    </div>
  );
}
