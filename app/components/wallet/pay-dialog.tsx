import { useFetcher, useNavigate } from '@remix-run/react';
import { type ReactNode, useEffect, useRef } from 'react';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { type OrderPageData, OrderPayment } from '#app/domain/payments/order-ui.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';

/** Seed 001 §4, §9: the order status is polled every 3 seconds. */
export const ORDER_POLL_MS = 3000;

/**
 * The pay dialog (JavaScript only; without it the pay form leads to /topup/order/:id): the QR code, polling
 * the order page's loader every 3 s until the status leaves 0 (1 shows the green check). Closing stops the
 * polling (the component unmounts) and `onClose` refreshes the balance.
 */
export function PayDialog({ initial, onClose }: { initial: OrderPageData; onClose: () => void }) {
  const { t } = useTranslation('wallet');
  const fetcher = useFetcher<OrderPageData>();
  const data = fetcher.data?.order?.order_id === initial.order.order_id ? fetcher.data : initial;
  const pending = data.order.status === 0;
  const fetcherRef = useRef(fetcher);
  fetcherRef.current = fetcher;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => {
      if (fetcherRef.current.state === 'idle')
        fetcherRef.current.load(`/topup/order/${initial.order.order_id}`);
    }, ORDER_POLL_MS);
    return () => clearInterval(timer);
  }, [pending, initial.order.order_id]);
  return (
    <ModalOverlay
      className="pay-modal-overlay"
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <Modal className="pay-modal">
        <Dialog className="pay-dialog" data-testid="pay-dialog">
          <Heading slot="title">{t('order.heading')}</Heading>
          <OrderPayment data={data} />
          <div className="pay-dialog-actions">
            <Button onPress={onClose}>{t('order.close')}</Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

/**
 * The bill list dialog addressed by the URL (`?dialog=bills`): a modal with JavaScript, a section of the page
 * without it (and while hydrating), so its paging links work either way.
 */
export function BillsDialog({ closeTo, children }: { closeTo: string; children: ReactNode }) {
  const hydrated = useHydrated();
  const navigate = useNavigate();
  const { t } = useTranslation('wallet');
  if (!hydrated)
    return (
      <section
        className="wallet-card"
        id="dialog-bills"
        aria-labelledby="dialog-bills-title"
        data-testid="bills"
      >
        <h2 id="dialog-bills-title">{t('bills.heading')}</h2>
        {children}
        <p>
          <Link to={closeTo}>{t('order.close')}</Link>
        </p>
      </section>
    );
  return (
    <ModalOverlay
      className="pay-modal-overlay"
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) navigate(closeTo, { preventScrollReset: true });
      }}
    >
      <Modal className="pay-modal pay-modal-wide">
        <Dialog className="pay-dialog" data-testid="bills">
          <Heading slot="title">{t('bills.heading')}</Heading>
          {children}
          <div className="pay-dialog-actions">
            <Button onPress={() => navigate(closeTo, { preventScrollReset: true })}>
              {t('order.close')}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
