import { Form, useFetcher } from '@remix-run/react';
import { useState } from 'react';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { AdminContent } from '#app/components/admin-content.tsx';
import { Button } from '#app/components/ui/button.tsx';
import type { AdminContentView } from '#app/domain/content/admin-content.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

export const DISMISS_NOTICE_INTENT = 'dismiss-notice';

/**
 * The Notice option. With JavaScript a react-aria modal; closing it (the button, Escape or a click outside)
 * posts the notice's hash in the background so the same notice is not shown again. Without JavaScript a
 * visible block whose button posts the same form and comes back to the page.
 */
export function NoticeDialog({ view, hash }: { view: AdminContentView; hash: string }) {
  const { t } = useTranslation('content');
  const hydrated = useHydrated();
  const fetcher = useFetcher();
  const [open, setOpen] = useState(true);
  const fields = (
    <>
      <input type="hidden" name="intent" value={DISMISS_NOTICE_INTENT} />
      <input type="hidden" name="hash" value={hash} />
    </>
  );
  if (!hydrated) {
    return (
      <section className="notice-block" aria-labelledby="notice-title" data-testid="notice">
        <h2 id="notice-title">{t('notice.title')}</h2>
        <AdminContent view={view} title={t('notice.title')} />
        <Form method="post" action="/?index" className="notice-actions">
          {fields}
          <small>{t('notice.dismissHint')}</small>
          <Button type="submit" variant="primary">
            {t('notice.dismiss')}
          </Button>
        </Form>
      </section>
    );
  }
  const close = () => {
    setOpen(false);
    fetcher.submit({ intent: DISMISS_NOTICE_INTENT, hash }, { method: 'post', action: '/?index' });
  };
  return (
    <ModalOverlay
      className="list-overlay"
      isOpen={open}
      isDismissable
      onOpenChange={(next) => {
        if (!next) close();
      }}
    >
      <Modal className="list-dialog list-dialog-wide" data-testid="notice">
        <Dialog className="notice-dialog">
          <Heading slot="title">{t('notice.title')}</Heading>
          <AdminContent view={view} title={t('notice.title')} />
          <div className="notice-actions">
            <small>{t('notice.dismissHint')}</small>
            <Button variant="primary" onPress={close} autoFocus>
              {t('notice.dismiss')}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
