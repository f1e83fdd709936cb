import type { ReactNode } from 'react';
import {
  Button as AriaButton,
  type ButtonProps as AriaButtonProps,
  composeRenderProps,
} from 'react-aria-components';

export type ButtonVariant = 'primary' | 'secondary' | 'ghost';

export type ButtonProps = AriaButtonProps & { variant?: ButtonVariant; children?: ReactNode };

/**
 * The one Button. Inside a `<Form>` use type="submit" with name/value (an `intent`): react-aria renders a
 * native <button>, so forms submit without JavaScript.
 */
export function Button({ variant = 'secondary', className, ...props }: ButtonProps) {
  return (
    <AriaButton
      {...props}
      className={composeRenderProps(className, (cls) =>
        ['btn', `btn-${variant}`, cls].filter(Boolean).join(' '),
      )}
    />
  );
}
