import type { AppLoadContext } from '@remix-run/server-runtime';
import type { TFunction } from 'i18next';
import type { z } from 'zod';
import { parseInput } from '#app/domain/validation.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';

/** Transport glue of the auth JSON routes: the services, then the shared envelope and status mapping. */
export function authApi(
  context: AppLoadContext,
  handler: (services: ConsoleServices) => Promise<Response>,
): Promise<Response> {
  return envelope(() => handler(getServices(context)));
}

/**
 * Parses an auth body (login, register, reset) with its schema: strict types (a field that is not text is
 * refused, never turned into "true" or "[object Object]"), and every failure an InputError with the schema's
 * message (an i18n key of `auth`), answered in the envelope, never a 500.
 */
export function parseAuthInput<S extends z.ZodType>(t: TFunction, schema: S, value: unknown): z.output<S> {
  return parseInput(t, schema, value, {
    ns: 'auth',
    messages: 'translated',
    fallbackKey: 'errors.invalidInput',
  });
}
