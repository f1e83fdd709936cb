import { createCookie, redirect } from '@remix-run/node';
import { isToast, type Toast } from '#app/utils/toast.ts';

/** Flash toasts survive one POST-redirect-GET in a short-lived cookie, so they show without JavaScript. */
const toastCookie = createCookie('sy_toast', { path: '/', sameSite: 'lax', httpOnly: true, maxAge: 60 });

export async function createToastHeader(toast: Omit<Toast, 'id'>): Promise<string> {
  return toastCookie.serialize({ ...toast, id: crypto.randomUUID() });
}

export async function redirectWithToast(url: string, toast: Omit<Toast, 'id'>, init?: ResponseInit) {
  const headers = new Headers(init?.headers);
  headers.append('Set-Cookie', await createToastHeader(toast));
  return redirect(url, { ...init, headers });
}

/** Reads the pending toast and returns the header that clears it (only when one was present). */
export async function getToast(request: Request): Promise<{ toast: Toast | null; clear: string | null }> {
  const value = await toastCookie.parse(request.headers.get('Cookie'));
  if (!isToast(value)) return { toast: null, clear: null };
  return { toast: value, clear: await toastCookie.serialize('', { maxAge: 0 }) };
}
