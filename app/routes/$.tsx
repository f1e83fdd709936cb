import { data, type LoaderFunctionArgs } from '@remix-run/node';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { isProtectedPath } from '#app/domain/navigation/menu.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: 'common' };

/**
 * Every URL without a route. A protected path of the route map (seed 000 §2) sends a signed-out visitor to
 * /login first (`?expired=true` when their session ended), like the pages that will own those paths; everything else is the not-found page with 404.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const { pathname } = new URL(request.url);
  if (isProtectedPath(pathname)) await requireUser(request, getServices(context));
  return data({ notFound: true }, { status: 404 });
}

export default function NotFound() {
  const { t } = useTranslation();
  return (
    <div className="page not-found">
      <h1>{t('notFound.title')}</h1>
      <p data-testid="not-found-message">{t('notFound.body')}</p>
      <p>
        <Link to="/">{t('notFound.home')}</Link>
      </p>
    </div>
  );
}
