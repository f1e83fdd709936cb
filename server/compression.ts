/**
 * Response compression for the console's own answers (pages, JS, CSS, JSON): brotli or gzip as the client
 * asks, with `Vary: Accept-Encoding`. Event streams (text/event-stream: the playground's /pg/chat/completions)
 * are never compressed, nor anything already encoded, ranged, marked no-transform, or smaller than a packet.
 * The relay paths are forwarded before this middleware runs (server/console.ts), so their streams pass as sent.
 *
 * Unlike hono's compress (CompressionStream, which holds output until its buffer fills), this flushes whenever
 * the source has nothing more ready, so a page that streams (React suspense) still streams.
 */
import zlib from 'node:zlib';
import type { MiddlewareHandler } from 'hono';
import { COMPRESSIBLE_CONTENT_TYPE_REGEX } from 'hono/utils/compress';

export type Encoding = 'br' | 'gzip';

/** Smallest body worth compressing when its length is known. */
const THRESHOLD = 1024;

/** The best encoding the client accepts (q-values honoured; br preferred on a tie), or null. */
export function chooseEncoding(acceptEncoding: string | null | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (name: Encoding) => q.get(name) ?? q.get('*') ?? 0;
  const br = of('br');
  const gzip = of('gzip');
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

export function isCompressible(contentType: string | null): boolean {
  return !!contentType && COMPRESSIBLE_CONTENT_TYPE_REGEX.test(contentType);
}

function createEncoder(encoding: Encoding): zlib.Gzip | zlib.BrotliCompress {
  return encoding === 'br'
    ? zlib.createBrotliCompress({
        // quality 5: most of brotli's gain at a few ms for the largest bundle; dynamic pages stay cheap
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 },
      })
    : zlib.createGzip({ level: 6 });
}

const IDLE = Symbol('idle');

/**
 * Compresses a body stream. Chunks that arrive together are compressed together; when the source pauses, the
 * encoder is flushed so what was sent so far reaches the client.
 */
export function compressStream(
  body: ReadableStream<Uint8Array>,
  encoding: Encoding,
): ReadableStream<Uint8Array> {
  const encoder = createEncoder(encoding);
  const reader = body.getReader();
  const flushKind = encoding === 'br' ? zlib.constants.BROTLI_OPERATION_FLUSH : zlib.constants.Z_SYNC_FLUSH;
  const flush = () => new Promise<void>((resolve) => encoder.flush(flushKind, () => resolve()));
  const idle = () => new Promise<typeof IDLE>((resolve) => setImmediate(() => resolve(IDLE)));
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      encoder.on('data', (chunk: Buffer) => {
        if (!cancelled) controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
      encoder.once('end', () => {
        if (!cancelled) controller.close();
      });
      encoder.once('error', (err) => {
        if (!cancelled) controller.error(err);
      });
      (async () => {
        let next = reader.read();
        for (;;) {
          let result = await Promise.race([next, idle()]);
          if (result === IDLE) {
            await flush();
            result = await next;
          }
          if (result.done) {
            encoder.end();
            return;
          }
          if (!encoder.write(result.value)) await new Promise((r) => encoder.once('drain', r));
          next = reader.read();
        }
      })().catch((err) => {
        encoder.destroy(err as Error);
        if (!cancelled) controller.error(err);
      });
    },
    cancel(reason) {
      cancelled = true;
      encoder.destroy();
      return reader.cancel(reason);
    },
  });
}

/** Hono middleware: compresses text answers (HTML, JS, CSS, JSON, SVG...) but never event streams. */
export function compression(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!isCompressible(c.res.headers.get('Content-Type'))) return;
    // The answer differs by Accept-Encoding from here on, compressed or not (a cache must not mix them).
    const vary = c.res.headers.get('Vary');
    if (vary !== '*' && !/(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(vary ?? '')) {
      c.header('Vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
    }
    const res = c.res;
    const length = res.headers.get('Content-Length');
    if (
      c.req.method === 'HEAD' ||
      !res.body ||
      res.status === 204 ||
      res.status === 206 ||
      res.status === 304 ||
      res.headers.has('Content-Encoding') ||
      /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(res.headers.get('Cache-Control') ?? '') ||
      (length !== null && Number(length) < THRESHOLD)
    )
      return;
    const encoding = chooseEncoding(c.req.header('Accept-Encoding'));
    if (!encoding) return;
    // (assigning c.res copies the old headers over the new answer, so they are changed after)
    c.res = new Response(compressStream(res.body, encoding), res);
    c.res.headers.delete('Content-Length');
    c.res.headers.set('Content-Encoding', encoding);
    const etag = c.res.headers.get('ETag');
    if (etag && !etag.startsWith('W/')) c.res.headers.set('ETag', `W/${etag}`);
  };
}
