import { Form } from '@remix-run/react';
import { Button } from '#app/components/ui/button.tsx';
import { type HiddenFields, HiddenInputs } from './confirm-action.tsx';

/**
 * A one-click row action that needs no confirmation (enable, disable, promote …): an inline POST form of hidden
 * `fields` with a ghost submit button, so it works without JavaScript.
 */
export function PostButton({
  fields,
  label,
  action,
  dataAction,
  isDisabled,
  className = 'list-inline-form',
}: {
  fields: HiddenFields;
  label: string;
  action?: string;
  dataAction?: string;
  isDisabled?: boolean;
  className?: string;
}) {
  return (
    <Form method="post" action={action} className={className}>
      <HiddenInputs fields={fields} />
      <Button type="submit" variant="ghost" isDisabled={isDisabled} data-action={dataAction}>
        {label}
      </Button>
    </Form>
  );
}
