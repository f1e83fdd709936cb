import type { CSSProperties, ReactNode } from 'react';
import { Dialog, DialogTrigger, Modal, ModalOverlay } from 'react-aria-components';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';

/**
 * A button opening a drawer (or modal) with JavaScript; without it, `href` as a link to the equivalent page.
 * The drawer's content is `children(close)`; `isOpen`/`onOpenChange` make it controlled (e.g. to reset a form).
 */
export function ModalAction({
  label,
  title,
  href,
  hrefClassName = 'btn btn-ghost',
  variant = 'ghost',
  dataAction,
  modalClassName = 'list-drawer',
  modalStyle,
  testId,
  isOpen,
  onOpenChange,
  children,
}: {
  label: string;
  /** the dialog's accessible name */
  title: string;
  href?: string;
  hrefClassName?: string;
  variant?: 'ghost' | 'primary' | 'secondary';
  dataAction?: string;
  modalClassName?: string;
  modalStyle?: CSSProperties;
  testId?: string;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  children: ReactNode;
}) {
  const hydrated = useHydrated();
  if (!hydrated && href) {
    return (
      <Link to={href} className={hrefClassName}>
        {label}
      </Link>
    );
  }
  return (
    <DialogTrigger isOpen={isOpen} onOpenChange={onOpenChange}>
      <Button variant={variant} data-action={dataAction}>
        {label}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className={modalClassName} style={modalStyle} data-testid={testId}>
          <Dialog aria-label={title}>{children}</Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}
