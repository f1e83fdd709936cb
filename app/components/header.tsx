import { Form, useLocation, useNavigate, useSubmit } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { MobileMenu } from '#app/components/mobile-menu.tsx';
import { NewYearEgg } from '#app/components/new-year.tsx';
import { LanguageMenu, ThemeSwitch } from '#app/components/preference-forms.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { DropdownMenu } from '#app/components/ui/menu.tsx';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { isActivePath, topNavItems } from '#app/domain/navigation/menu.ts';
import type { PublicStatus } from '#app/domain/status/status.server.ts';
import type { Language } from '#app/i18n/config.ts';
import type { Theme } from '#app/utils/preferences.ts';

export type HeaderProps = {
  status: PublicStatus;
  user: SessionUser | null;
  locale: Language;
  theme: Theme;
  logoUrl: string;
  newYear: boolean;
};

function UserMenu({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const submit = useSubmit();
  const navigate = useNavigate();
  const initial = (user.displayName || user.username).slice(0, 1).toUpperCase();
  return (
    <DropdownMenu
      label={t('user.menu')}
      className="user-menu"
      trigger={
        <>
          <span className="avatar" aria-hidden="true">
            {initial}
          </span>
          <span className="user-name">{user.displayName || user.username}</span>
        </>
      }
      items={[
        { id: 'profile', label: t('user.profile') },
        { id: 'logout', label: t('user.logout') },
      ]}
      onAction={(id) => {
        if (id === 'profile') navigate('/user/edit');
        if (id === 'logout') submit(null, { method: 'post', action: '/logout' });
      }}
      fallback={
        <Form method="post" action="/logout" className="menu">
          <a href="/user/edit" className="menu-item">
            {t('user.profile')}
          </a>
          <button type="submit" className="menu-item">
            {t('user.logout')}
          </button>
        </Form>
      }
    />
  );
}

export function Header({ status, user, locale, theme, logoUrl, newYear }: HeaderProps) {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  return (
    <header className="topbar">
      <MobileMenu user={user} status={status} />
      <Link to="/" className="brand">
        <img src={logoUrl} alt={t('app.logoAlt', { name: status.system_name })} width={28} height={28} />
        <span className="brand-name">{status.system_name}</span>
      </Link>
      {status.self_use_mode_enabled ? <span className="badge">{t('badge.selfUse')}</span> : null}
      {status.demo_site_enabled ? <span className="badge badge-info">{t('badge.demo')}</span> : null}
      <nav aria-label={t('nav.main')} className="topnav">
        <ul>
          {topNavItems(status).map((item) => (
            <li key={item.key}>
              <Link to={item.to} current={isActivePath(pathname, item.to)} className="nav-link">
                {t(item.labelKey)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="topbar-actions">
        {newYear ? <NewYearEgg /> : null}
        <ThemeSwitch theme={theme} />
        <LanguageMenu locale={locale} />
        {user ? (
          <UserMenu user={user} />
        ) : (
          <>
            <Link to="/login" className="btn btn-ghost" current={pathname === '/login'}>
              {t('user.login')}
            </Link>
            {status.self_use_mode_enabled ? null : (
              <Link to="/register" className="btn btn-primary" current={pathname === '/register'}>
                {t('user.register')}
              </Link>
            )}
          </>
        )}
      </div>
    </header>
  );
}
