/**
 * The browser's one fetch wrapper for the JSON contract (seed 000 §8 "Shared handling of responses").
 * Used by fetchers and islands; every message goes through i18n keys of the `common` namespace.
 *
 * | condition            | effect                                             |
 * | HTTP 401             | go to /login?expired=true                          |
 * | HTTP 429             | errors.tooManyRequests                             |
 * | HTTP 500             | errors.internal                                    |
 * | HTTP 405             | errors.demoOnly                                    |
 * | other HTTP failure   | errors.withMessage ('error: ' + message)           |
 * | success false        | the server's message as an error toast             |
 */

export type Translate = (key: string, options?: Record<string, unknown>) => string;

export type ApiClientDeps = {
  t: Translate;
  /** shows an error toast */
  notify: (message: string) => void;
  /** full navigation (401) */
  redirect: (url: string) => void;
  fetch?: typeof fetch;
};

export type ApiResult<T> =
  | { ok: true; data: T; message: string }
  | { ok: false; status: number; message: string; data?: unknown };

export const EXPIRED_LOGIN_URL = '/login?expired=true';

type Envelope = { success?: unknown; message?: unknown; data?: unknown };

async function readEnvelope(response: Response): Promise<Envelope | null> {
  try {
    const body: unknown = await response.json();
    return typeof body === 'object' && body !== null ? (body as Envelope) : null;
  } catch {
    return null;
  }
}

/** The user-facing message for a failed HTTP status (null for 401, which redirects instead). */
export function httpErrorMessage(status: number, serverMessage: string, t: Translate): string | null {
  switch (status) {
    case 401:
      return null;
    case 429:
      return t('errors.tooManyRequests');
    case 500:
      return t('errors.internal');
    case 405:
      return t('errors.demoOnly');
    default:
      return t('errors.withMessage', { message: serverMessage });
  }
}

export function createApiClient(deps: ApiClientDeps) {
  const doFetch = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function request<T>(input: string, init: RequestInit = {}): Promise<ApiResult<T>> {
    const headers = new Headers(init.headers);
    if (!headers.has('Accept')) headers.set('Accept', 'application/json');
    if (init.body && typeof init.body === 'string' && !headers.has('Content-Type')) {
      headers.set('Content-Type', 'application/json');
    }
    let response: Response;
    try {
      response = await doFetch(input, { credentials: 'same-origin', ...init, headers });
    } catch {
      const message = deps.t('errors.network');
      deps.notify(message);
      return { ok: false, status: 0, message };
    }
    const body = await readEnvelope(response);
    const serverMessage =
      typeof body?.message === 'string' && body.message ? body.message : response.statusText;

    if (!response.ok) {
      if (response.status === 401) {
        deps.redirect(EXPIRED_LOGIN_URL);
        return { ok: false, status: 401, message: deps.t('errors.expired') };
      }
      const message = httpErrorMessage(response.status, serverMessage, deps.t) ?? serverMessage;
      deps.notify(message);
      return { ok: false, status: response.status, message, data: body?.data };
    }
    if (body?.success !== true) {
      const message =
        typeof body?.message === 'string' && body.message ? body.message : deps.t('errors.unexpected');
      deps.notify(message);
      return { ok: false, status: response.status, message, data: body?.data };
    }
    return { ok: true, data: body.data as T, message: typeof body.message === 'string' ? body.message : '' };
  }

  return {
    request,
    get: <T>(url: string, init?: RequestInit) => request<T>(url, { ...init, method: 'GET' }),
    post: <T>(url: string, json: unknown, init?: RequestInit) =>
      request<T>(url, { ...init, method: 'POST', body: JSON.stringify(json) }),
    put: <T>(url: string, json: unknown, init?: RequestInit) =>
      request<T>(url, { ...init, method: 'PUT', body: JSON.stringify(json) }),
    del: <T>(url: string, init?: RequestInit) => request<T>(url, { ...init, method: 'DELETE' }),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
