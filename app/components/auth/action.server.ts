import { data } from '@remix-run/node';
import { isDomainError } from '#app/domain/errors.ts';

/**
 * What the auth page actions answer when they do not redirect: the form-level message, the field messages and
 * the submitted values to keep (never passwords). The domain's own message is shown as is (it is translated
 * by the domain); unexpected errors propagate (HTTP 500, error page).
 */
export type FormReply = {
  intent: string;
  status: 'error' | 'success';
  message: string | null;
  fieldErrors: Record<string, string[]>;
  values: Record<string, string>;
  /** Extra payload of a successful step that stays on the page (e.g. the new password). */
  payload?: Record<string, string>;
};

export function reply(init: Partial<FormReply> & { intent: string }, status = 200) {
  return data<FormReply>(
    { status: 'error', message: null, fieldErrors: {}, values: {}, ...init },
    { status },
  );
}

export function errorReply(error: unknown, intent: string, values: Record<string, string>) {
  if (!isDomainError(error)) throw error;
  const fieldErrors =
    'fieldErrors' in error && typeof error.fieldErrors === 'object' && error.fieldErrors
      ? (error.fieldErrors as Record<string, string[]>)
      : {};
  const headers = new Headers();
  const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
  if (typeof retryAfter === 'number') headers.set('Retry-After', String(retryAfter));
  return data<FormReply>(
    { intent, status: 'error', message: error.message, fieldErrors, values },
    { status: error.status === 400 ? 400 : error.status, headers },
  );
}

/** A string field of a form ('' when absent). */
export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}
