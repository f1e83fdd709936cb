import { clearStateCookies } from '#app/domain/oauth/state.server.ts';
import { toHttpResponse } from '#app/utils/envelope.server.ts';

/**
 * The /api/oauth/* envelope (statuses as in the shared toHttpResponse). State cookies of this browser are cleared on every answer of a callback.
 */
export async function oauthEnvelope(
  request: Request,
  handler: () => Promise<Response> | Response,
  opts: { clearState?: boolean } = {},
): Promise<Response> {
  let response: Response;
  try {
    response = await handler();
  } catch (error) {
    response = toHttpResponse(error);
  }
  if (opts.clearState) for (const c of clearStateCookies(request)) response.headers.append('Set-Cookie', c);
  return response;
}

/** True when the request is a browser navigation (the Telegram widget's redirect) rather than a fetch. */
export function wantsHtml(request: Request): boolean {
  const accept = request.headers.get('Accept') ?? '';
  return accept.includes('text/html') && request.headers.get('Sec-Fetch-Mode') !== 'cors';
}
