/**
 * Request body bounds of the console (ADR 015), in front of every page action, `.data` / `?_data` request and
 * /api route: at most MAX_BODY_BYTES, counted as the bytes arrive (chunked bodies included), and JSON nested at
 * most MAX_JSON_DEPTH levels. Refusals come before Remix runs: /api answers `{success:false, message}`, pages
 * a plain-text message, both translated. The relay paths do not come here: the forwarding streams them to the
 * relay, which applies its own limit and answers in the route's envelope.
 */
import { jsonTooDeep, MAX_JSON_DEPTH } from '@switchyard/relay/http/body.ts';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getFixedT } from '#app/i18n/i18n.server.ts';

async function refuse(
  c: Context,
  status: 400 | 413,
  message: (t: (k: string, o?: object) => string) => string,
) {
  const t = await getFixedT(c.req.raw);
  const text = message(t as (k: string, o?: object) => string);
  const headers = { 'Cache-Control': 'no-store', Connection: 'close' };
  if (new URL(c.req.url).pathname.startsWith('/api/'))
    return Response.json({ success: false, message: text, data: null }, { status, headers });
  return new Response(text, { status, headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8' } });
}

/** Mount after the relay forwarding: the relay paths never reach it (the relay applies its own limit). */
export function consoleBodyLimit(maxBytes: number): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: (c) => refuse(c, 413, (t) => t('requestBody.tooLarge', { max: maxBytes })),
  });
  return async (c, next) => {
    if (!c.req.raw.body) return next();
    return limit(c, async () => {
      if (/\bjson\b/i.test(c.req.header('content-type') ?? '')) {
        const text = await c.req.raw.text();
        let tooDeep = false;
        try {
          tooDeep = jsonTooDeep(JSON.parse(text));
        } catch {
          // Malformed JSON is the route's to refuse, in its own words.
        }
        if (tooDeep) {
          c.res = await refuse(c, 400, (t) => t('requestBody.tooDeep', { max: MAX_JSON_DEPTH }));
          return;
        }
        c.req.raw = new Request(c.req.raw, { body: text });
      }
      await next();
    });
  };
}
