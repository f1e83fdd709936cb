import type { ReactNode } from 'react';
import { Link as AriaLink, type LinkProps as AriaLinkProps } from 'react-aria-components';

export type LinkProps = Omit<AriaLinkProps, 'href' | 'children'> & {
  to: string;
  /** marks the link as the current page (aria-current="page") */
  current?: boolean;
  children?: ReactNode;
};

/**
 * The one Link: react-aria's Link (renders a real <a href>, so it works before hydration) routed through the
 * Remix router by the RouterProvider in root.tsx.
 */
export function Link({ to, current, className, ...props }: LinkProps) {
  return (
    <AriaLink
      {...props}
      href={to}
      aria-current={current ? 'page' : undefined}
      className={['link', className].filter(Boolean).join(' ')}
    />
  );
}
