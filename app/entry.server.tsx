import { PassThrough } from 'node:stream';
import {
  type ActionFunctionArgs,
  createReadableStreamFromReadable,
  type EntryContext,
  type LoaderFunctionArgs,
} from '@remix-run/node';
import { isRouteErrorResponse, RemixServer } from '@remix-run/react';
import { createInstance } from 'i18next';
import { isbot } from 'isbot';
import { renderToPipeableStream } from 'react-dom/server';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { createNonce, setPageSecurityHeaders } from '#app/domain/security/csp.server.ts';
import { i18nConfig } from '#app/i18n/config.ts';
import { getLocale, i18next } from '#app/i18n/i18n.server.ts';
import { resources } from '#app/i18n/resources.ts';
import { NonceContext } from '#app/utils/nonce.ts';

export const streamTimeout = 5_000;

/**
 * Remix's default (log what a handler threw, unless the client went away), except its router's own refusal of a
 * method no handler serves (400 "no loader", 405 "no action"): the client's mistake, answered as such
 * (server/api-contract.ts puts it in the /api envelope), not a server error.
 */
export function handleError(error: unknown, { request }: LoaderFunctionArgs | ActionFunctionArgs) {
  if (request.signal.aborted) return;
  if (isRouteErrorResponse(error)) {
    const internal = (error as { internal?: boolean }).internal === true;
    if (internal && (error.status === 400 || error.status === 405)) return;
    const cause = (error as { error?: unknown }).error;
    console.error(cause ?? error);
    return;
  }
  console.error(error);
}

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
) {
  const instance = createInstance();
  const lng = await getLocale(request);
  const ns = i18next.getRouteNamespaces(remixContext);
  await instance
    .use(initReactI18next)
    .init({ ...i18nConfig, lng, ns: ns.length ? ns : ['common'], resources });

  // A fresh CSP nonce for this page (ADR 032): in the header, and on every script the page renders.
  const nonce = createNonce();
  setPageSecurityHeaders(responseHeaders, nonce, { dev: import.meta.env.DEV });

  const readyEvent =
    isbot(request.headers.get('user-agent')) || remixContext.isSpaMode ? 'onAllReady' : 'onShellReady';

  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(
      <NonceContext.Provider value={nonce}>
        <I18nextProvider i18n={instance}>
          <RemixServer context={remixContext} url={request.url} nonce={nonce} />
        </I18nextProvider>
      </NonceContext.Provider>,
      {
        nonce,
        [readyEvent]() {
          shellRendered = true;
          const body = new PassThrough();
          responseHeaders.set('Content-Type', 'text/html; charset=utf-8');
          resolve(
            new Response(createReadableStreamFromReadable(body), {
              headers: responseHeaders,
              status: responseStatusCode,
            }),
          );
          pipe(body);
        },
        onShellError(error: unknown) {
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          // Errors inside the shell are logged by onShellError; these are streaming errors.
          if (shellRendered) console.error(error);
        },
      },
    );
    setTimeout(abort, streamTimeout + 1_000);
  });
}
