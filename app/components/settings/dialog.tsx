import { useNavigate } from '@remix-run/react';
import type { ReactNode } from 'react';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';

/**
 * A dialog addressed by the URL (`?dialog=name`): with JavaScript it is a react-aria modal (closing navigates to
 * `closeTo`); without JavaScript (and while hydrating) the same content renders as a plain section of the page,
 * so every form inside works as a normal POST.
 */
export function UrlDialog({
  id,
  title,
  closeTo,
  children,
}: {
  id: string;
  title: string;
  closeTo: string;
  children: ReactNode;
}) {
  const hydrated = useHydrated();
  const navigate = useNavigate();
  const { t } = useTranslation('settings');
  if (!hydrated) {
    return (
      <section
        className="card settings-dialog-page"
        id={`dialog-${id}`}
        aria-labelledby={`dialog-${id}-title`}
      >
        <h2 id={`dialog-${id}-title`}>{title}</h2>
        {children}
        <p>
          <Link to={closeTo}>{t('dialogs.close')}</Link>
        </p>
      </section>
    );
  }
  return (
    <ModalOverlay
      className="settings-modal-overlay"
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) navigate(closeTo, { preventScrollReset: true });
      }}
    >
      <Modal className="settings-modal">
        <Dialog className="settings-dialog" data-dialog={id}>
          <Heading slot="title">{title}</Heading>
          {children}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
