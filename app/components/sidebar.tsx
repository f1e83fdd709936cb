import { useLocation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { SidebarToggle } from '#app/components/preference-forms.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isActivePath, type MenuStatus, type MenuUser, sideMenuItems } from '#app/domain/navigation/menu.ts';

/** Side menu (seed 001 §2.3). Hidden at <= 600px by a CSS media query, so it also holds without JavaScript. */
export function Sidebar({
  user,
  status,
  collapsed,
}: {
  user: MenuUser;
  status: MenuStatus;
  collapsed: boolean;
}) {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  return (
    <nav
      id="side-menu"
      className="sidebar"
      aria-label={t('sidebar.label')}
      data-collapsed={collapsed ? 'true' : 'false'}
      data-testid="sidebar"
    >
      <ul>
        {sideMenuItems(user, status).map((item) => {
          const label = item.label ?? t(item.labelKey);
          return (
            <li key={item.key}>
              <Link
                to={item.to}
                current={isActivePath(pathname, item.to)}
                className="side-link"
                aria-label={collapsed ? label : undefined}
              >
                <span className="side-icon" aria-hidden="true">
                  {label.slice(0, 1)}
                </span>
                <span className="side-label">{label}</span>
              </Link>
            </li>
          );
        })}
      </ul>
      <SidebarToggle collapsed={collapsed} />
    </nav>
  );
}
