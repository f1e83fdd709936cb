import type { TFunction } from 'i18next';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import { InputError } from '#app/domain/errors.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const CLOUDFLARE_SITEVERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

/**
 * Cloudflare Turnstile check before login, register, e-mail code and password reset (seed 000 §5). A no-op
 * while the TurnstileCheckEnabled option is off; otherwise the token is posted with the secret key (and the
 * client IP) to TURNSTILE_VERIFY_URL. Refusals are InputErrors with new-api's messages.
 */
export async function verifyTurnstile(
  services: ConsoleServices,
  token: string | null,
  ip: string,
  t: TFunction = authTFor(),
): Promise<void> {
  if (!services.options.get('TurnstileCheckEnabled')) return;
  if (!token) throw new InputError(t('turnstile.empty'), { turnstile: [t('turnstile.empty')] });
  const body = new URLSearchParams({ secret: services.options.get('TurnstileSecretKey'), response: token });
  if (ip) body.set('remoteip', ip);
  let success = false;
  try {
    const res = await fetch(services.auth?.turnstileVerifyUrl ?? CLOUDFLARE_SITEVERIFY_URL, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as { success?: unknown };
    success = res.ok && json.success === true;
  } catch (error) {
    console.error('[turnstile] siteverify request failed', error);
    throw new InputError(t('turnstile.unavailable'));
  }
  if (!success) throw new InputError(t('turnstile.failed'), { turnstile: [t('turnstile.failed')] });
}

/** The token a request carries: `?turnstile=` (the JSON contract) or a form field set by the widget. */
export function turnstileToken(request: Request, form?: FormData | null): string | null {
  const fromQuery = new URL(request.url).searchParams.get('turnstile');
  if (fromQuery) return fromQuery;
  const fromForm = form?.get('cf-turnstile-response') ?? form?.get('turnstile');
  return typeof fromForm === 'string' && fromForm ? fromForm : null;
}
