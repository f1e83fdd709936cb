import { type ActionFunctionArgs, redirect } from '@remix-run/node';
import { logout } from '#app/domain/auth/session.server.ts';
import { getServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/** POST /logout: revokes the session row, clears the cookie, then /login with a toast (seed 001 §4). */
export async function action({ request, context }: ActionFunctionArgs) {
  const clear = await logout(request, getServices(context));
  return redirectWithToast(
    '/login',
    { type: 'success', key: 'toast.loggedOut' },
    { headers: { 'Set-Cookie': clear } },
  );
}

/** Logout is a POST only; a GET (typed URL, prefetch) changes nothing. */
export function loader() {
  return redirect('/');
}
