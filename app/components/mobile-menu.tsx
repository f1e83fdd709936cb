import { useLocation } from '@remix-run/react';
import { Menu, X } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { MenuLinks } from '#app/components/sidebar.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { type MenuStatus, type MenuUser, sideMenuItems, topNavItems } from '#app/domain/navigation/menu.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

/** The top navigation and (signed in) the console menu, as the drawer's / disclosure's content. */
function MenuContent({
  user,
  status,
  onNavigate,
}: {
  user: MenuUser;
  status: MenuStatus;
  onNavigate?: () => void;
}) {
  const { t } = useTranslation();
  const side = sideMenuItems(user, status);
  return (
    <>
      <nav aria-label={t('nav.main')} className="mobile-nav">
        <MenuLinks items={topNavItems(status)} onNavigate={onNavigate} />
      </nav>
      {side.length > 0 ? (
        <nav aria-label={t('sidebar.label')} className="mobile-nav">
          <h2 className="mobile-nav-title">{t('sidebar.label')}</h2>
          <MenuLinks items={side} onNavigate={onNavigate} />
        </nav>
      ) : null}
    </>
  );
}

/**
 * The menu of narrow screens (<= 600px, where the top navigation and the sidebar are hidden by CSS): with
 * JavaScript a react-aria modal drawer (focus kept inside, Escape or the overlay closes it, focus returns to the
 * button); without it a <details> disclosure holding the same links. Hidden by CSS on wider screens.
 */
export function MobileMenu({ user, status }: { user: MenuUser; status: MenuStatus }) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const { pathname } = useLocation();
  const [open, setOpen] = useState(false);
  // A navigation (link, back button) closes the drawer.
  useEffect(() => setOpen(false), [pathname]);

  const icon = <Menu aria-hidden="true" focusable="false" size={20} />;
  if (!hydrated) {
    return (
      <details className="mobile-menu" data-testid="mobile-menu">
        <summary className="btn btn-ghost icon-btn">
          {icon}
          <span className="sr-only">{t('mobileMenu.open')}</span>
        </summary>
        <div className="mobile-menu-panel">
          <MenuContent user={user} status={status} />
        </div>
      </details>
    );
  }
  return (
    <div className="mobile-menu" data-testid="mobile-menu">
      <DialogTrigger isOpen={open} onOpenChange={setOpen}>
        <Button variant="ghost" className="icon-btn" aria-label={t('mobileMenu.open')}>
          {icon}
        </Button>
        <ModalOverlay isDismissable className="list-overlay">
          <Modal className="mobile-drawer" data-testid="mobile-drawer">
            <Dialog aria-labelledby="mobile-drawer-title" className="mobile-drawer-dialog">
              <div className="mobile-drawer-head">
                <Heading slot="title" id="mobile-drawer-title" className="mobile-drawer-title">
                  {t('mobileMenu.title')}
                </Heading>
                <Button
                  variant="ghost"
                  className="icon-btn"
                  aria-label={t('mobileMenu.close')}
                  onPress={() => setOpen(false)}
                >
                  <X aria-hidden="true" focusable="false" size={20} />
                </Button>
              </div>
              <MenuContent user={user} status={status} onNavigate={() => setOpen(false)} />
            </Dialog>
          </Modal>
        </ModalOverlay>
      </DialogTrigger>
    </div>
  );
}
