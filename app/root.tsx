import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import {
  isRouteErrorResponse,
  Links,
  Meta,
  Outlet,
  Scripts,
  ScrollRestoration,
  useHref,
  useLoaderData,
  useLocation,
  useNavigate,
  useRouteError,
  useRouteLoaderData,
} from '@remix-run/react';
import { type ReactNode, useEffect } from 'react';
import { RouterProvider } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { useChangeLanguage } from 'remix-i18next/react';
import defaultLogo from '#app/assets/logo.svg';
import { ErrorPage } from '#app/components/error-page.tsx';
import { Footer } from '#app/components/footer.tsx';
import { Header } from '#app/components/header.tsx';
import { useOptimisticSidebar, useOptimisticTheme } from '#app/components/preference-forms.tsx';
import { Sidebar } from '#app/components/sidebar.tsx';
import { ToastProvider } from '#app/components/toaster.tsx';
import { getSessionUser } from '#app/domain/auth/session.server.ts';
import { isNewYearsDay, layoutFor } from '#app/domain/navigation/menu.ts';
import { getPublicStatus } from '#app/domain/status/status.server.ts';
import { getLocale } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';
import appStyles from '#app/styles/app.css?url';
import { useNonce } from '#app/utils/nonce.ts';
import { getPreferences } from '#app/utils/preferences.server.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { getToast } from '#app/utils/toast.server.ts';
import { useDetectTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: 'common' };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: appStyles }];

export async function loader({ request, context }: LoaderFunctionArgs) {
  const services = getServices(context);
  const [locale, preferences, user, flash] = await Promise.all([
    getLocale(request),
    getPreferences(request),
    getSessionUser(request, services),
    getToast(request),
  ]);
  const status = getPublicStatus(services);
  const headers = new Headers();
  if (flash.clear) headers.append('Set-Cookie', flash.clear);
  return data(
    {
      locale,
      theme: preferences.theme,
      sidebarCollapsed: preferences.sidebarCollapsed ?? status.default_collapse_sidebar,
      pageSize: preferences.pageSize,
      user,
      status,
      toast: flash.toast,
      newYear: isNewYearsDay(new Date(), requestTimeZone(request)),
      timeZone: requestTimeZone(request),
    },
    { headers },
  );
}

export type RootLoaderData = Awaited<ReturnType<typeof loader>>['data'];

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: data?.status.system_name ?? 'Switchyard' },
];

function Document({
  locale,
  theme,
  logoUrl,
  children,
}: {
  locale: string;
  theme: string;
  logoUrl: string;
  children: ReactNode;
}) {
  const { i18n } = useTranslation();
  const nonce = useNonce();
  return (
    <html lang={locale} dir={i18n.dir(locale)} data-theme={theme}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content={theme === 'dark' ? 'dark' : 'light'} />
        <link rel="icon" href={logoUrl} />
        <Meta />
        <Links />
      </head>
      <body>
        {children}
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

export default function App() {
  const loaderData = useLoaderData<typeof loader>();
  const { locale, user, status, toast, newYear } = loaderData;
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  useChangeLanguage(locale);
  const theme = useOptimisticTheme(loaderData.theme);
  const collapsed = useOptimisticSidebar(loaderData.sidebarCollapsed);
  const layout = layoutFor(pathname);
  // Logged-out visitors see no console sidebar.
  const showSidebar = layout.sidebar && user !== null;
  useDetectTimeZone(loaderData.timeZone);
  const logoUrl = status.logo || defaultLogo;
  // Marks the document as interactive (used by the e2e harness to wait for hydration).
  useEffect(() => {
    document.documentElement.dataset.hydrated = 'true';
  }, []);

  return (
    <Document locale={locale} theme={theme} logoUrl={logoUrl}>
      <RouterProvider navigate={navigate} useHref={useHref}>
        <ToastProvider flash={toast}>
          <a href="#main" className="skip-link">
            {t('app.skipToContent')}
          </a>
          {layout.header ? (
            <Header
              status={status}
              user={user}
              locale={locale}
              theme={theme}
              logoUrl={logoUrl}
              newYear={newYear}
            />
          ) : null}
          <div className="shell" data-sidebar={showSidebar ? (collapsed ? 'collapsed' : 'expanded') : 'none'}>
            {showSidebar ? <Sidebar user={user} status={status} collapsed={collapsed} /> : null}
            <main id="main" tabIndex={-1} className="content">
              <Outlet />
            </main>
          </div>
          <Footer status={status} />
        </ToastProvider>
      </RouterProvider>
    </Document>
  );
}

export function ErrorBoundary() {
  const error = useRouteError();
  const rootData = useRouteLoaderData<typeof loader>('root');
  const { pathname, search } = useLocation();
  if (!isRouteErrorResponse(error)) console.error(error);
  const status = isRouteErrorResponse(error) ? error.status : 500;
  return (
    <Document locale={rootData?.locale ?? 'zh'} theme={rootData?.theme ?? 'light'} logoUrl={defaultLogo}>
      <ErrorPage status={status} retryHref={`${pathname}${search}`} />
    </Document>
  );
}
