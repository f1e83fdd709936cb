/**
 * How the relay sends a request upstream. The portable client is `fetch` (Deno, and tests that inject one); on
 * Node the fast path (ARCHITECTURE.md §1) calls undici's dispatcher directly: keep-alive pools per origin and no
 * WHATWG Request/Response/stream wrapping for non-streamed replies, which profiling showed as the largest share
 * of the relay's CPU per request.
 */
import type { UpstreamRequest } from '../providers/types.ts';

export type UpstreamReply = {
  status: number;
  headers: Headers;
  /** The whole body (consumes it). */
  bytes(): Promise<Uint8Array>;
  /** The whole body as text (consumes it). */
  text(): Promise<string>;
  /** The body chunk by chunk as it arrives, for streamed replies (consumes it); null when there is none. */
  chunks(): UpstreamChunks | null;
};

/** A streamed body read one upstream chunk at a time. */
export type UpstreamChunks = {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  /** Stops reading and closes the upstream; a pending or later read then ends (done). */
  cancel(reason?: unknown): Promise<void>;
};

export type UpstreamClient = {
  send(req: UpstreamRequest, signal: AbortSignal): Promise<UpstreamReply>;
};

/** The portable client over any `fetch`. */
export function fetchClient(f: typeof fetch): UpstreamClient {
  return {
    async send(req, signal) {
      if (req.transport === 'ws') return wsSend(req, signal, f);
      const res = await f(req.url, { method: req.method, headers: req.headers, body: req.body, signal });
      return {
        status: res.status,
        headers: res.headers,
        bytes: async () => new Uint8Array(await res.arrayBuffer()),
        text: () => res.text(),
        chunks: () => (res.body ? webChunks(res.body) : null),
      };
    },
  };
}

/** The slice of undici's API used here (undici is loaded only on Node). */
type NodeBody = AsyncIterable<Uint8Array> & {
  destroy(err?: Error): void;
  on(event: 'error', f: () => void): void;
};
type Dispatcher = {
  request(opts: {
    origin: string;
    path: string;
    method: string;
    headers: string[];
    body: string | Uint8Array | null;
    signal: AbortSignal;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: NodeBody }>;
};

/**
 * The Node fast path. Bodies that are not plain text or bytes (multipart FormData) go through `fallback`, which
 * knows how to encode them.
 */
export function undiciClient(fallback: UpstreamClient): UpstreamClient {
  let agent: Promise<Dispatcher> | null = null;
  const load = () => {
    // A non-literal specifier: Deno never needs to resolve it.
    const name = 'undici';
    agent ??= import(name).then(
      // undici's default keep-alive (4 s idle, or the server's hint): a longer one races servers closing idle
      // sockets, and a POST that hits a closed socket is not retried.
      (m: { Agent: new () => unknown }) => new m.Agent() as unknown as Dispatcher,
    );
    return agent;
  };
  return {
    async send(req, signal) {
      const body = req.body ?? null;
      if (req.transport === 'ws') return wsSend(req, signal);
      if (body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))
        return fallback.send(req, signal);
      const d = await load();
      const u = new URL(req.url);
      const headers: string[] = [];
      let hasType = false;
      let hasAgent = false;
      let hasAccept = false;
      for (const [k, v] of req.headers) {
        if (k === 'content-type') hasType = true;
        else if (k === 'user-agent') hasAgent = true;
        else if (k === 'accept') hasAccept = true;
        headers.push(k, v);
      }
      // What fetch would add, so upstreams (and their WAFs) see the same request on either path.
      if (typeof body === 'string' && !hasType) headers.push('content-type', 'text/plain;charset=UTF-8');
      if (!hasAgent) headers.push('user-agent', 'node');
      if (!hasAccept) headers.push('accept', '*/*');
      const res = await d.request({
        origin: u.origin,
        path: u.pathname + u.search,
        method: req.method,
        headers,
        body,
        signal,
      });
      const resBody = res.body;
      if (REDIRECTS.has(res.statusCode) && res.headers.location !== undefined) {
        // fetch follows redirects and undici's request() does not: rare enough to let fetch redo the call.
        drop(resBody);
        return fallback.send(req, signal);
      }
      return {
        status: res.statusCode,
        headers: toHeaders(res.headers),
        bytes: () => collect(resBody),
        text: async () => decoder.decode(await collect(resBody)),
        chunks: () => nodeChunks(resBody),
      };
    },
  };
}

const decoder = new TextDecoder();

/** Closes an unwanted body; undici reports that as an 'aborted' error, which nobody else is listening for. */
function drop(body: NodeBody): void {
  body.on('error', () => {});
  body.destroy();
}
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers();
  for (const k in raw) {
    const v = raw[k];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) h.append(k, one);
    else h.append(k, v);
  }
  return h;
}

/** Reads a Node body whole; a single chunk (the usual small JSON reply) is returned without a copy. */
async function collect(body: NodeBody): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return concat(chunks);
}

/** The chunks as one array; a single chunk is returned as it is. */
function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** A Node body chunk by chunk (one upstream read per chunk, so frames are not held back). */
function nodeChunks(body: NodeBody): UpstreamChunks {
  const it = body[Symbol.asyncIterator]();
  let cancelled = false;
  return {
    async read() {
      try {
        const next = await it.next();
        return next.done ? { done: true } : { done: false, value: next.value };
      } catch (err) {
        // Destroying the body fails the pending read; after a cancel that is just the end.
        if (cancelled) return { done: true };
        throw err;
      }
    },
    async cancel() {
      cancelled = true;
      drop(body);
    },
  };
}

/** A web stream (fetch's body) chunk by chunk. */
function webChunks(body: ReadableStream<Uint8Array>): UpstreamChunks {
  const reader = body.getReader();
  return {
    async read() {
      const next = await reader.read();
      return next.done ? { done: true } : { done: false, value: next.value };
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

/**
 * The WebSocket transport (UpstreamRequest.transport 'ws', e.g. Xunfei Spark): the runtime's WebSocket client
 * (Node 22 and Deno both have one). Resolves once the socket is open, after sending `body` as one text message;
 * the reply is every message the upstream sends, each followed by '\n', until it closes. A socket that fails or
 * closes after opening ends the reply there: the adaptor judges whether what came is whole (Spark's last frame
 * says so), and a stream's conversion tells the client.
 *
 * The WebSocket API hides why a handshake was refused, so a socket that fails to open is asked once more over
 * plain HTTP(S) (`probe`, a GET of the same URL): an upstream that refuses the handshake for its credentials
 * refuses that GET alike (Spark: 401 `{"message":"HMAC signature does not match"}`, 403 for a stale date), and
 * that status and body become the reply, so the adaptor's parseError, key invalidation and auto-disable see the
 * real refusal. When the probe gets no such refusal (401, 403, 429) or no answer, the upstream is unreachable.
 */
export function wsSend(
  req: UpstreamRequest,
  signal: AbortSignal,
  probe: typeof fetch = fetch,
): Promise<UpstreamReply> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const ws = new WebSocket(req.url);
    ws.binaryType = 'arraybuffer';
    const queue: Uint8Array[] = [];
    let ended = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    let opened = false;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const encoder = new TextEncoder();
    const onAbort = () => {
      failure ??= signal.reason instanceof Error ? signal.reason : new Error('aborted');
      try {
        ws.close();
      } catch {
        // already closing
      }
      if (!opened) reject(failure);
      ended = true;
      notify();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    ws.addEventListener('open', () => {
      opened = true;
      if (typeof req.body === 'string') ws.send(req.body);
      resolve({
        status: 200,
        headers: new Headers(),
        bytes,
        text: async () => decoder.decode(await bytes()),
        chunks,
      });
    });
    ws.addEventListener('message', (ev: MessageEvent) => {
      const data = ev.data;
      const text = typeof data === 'string' ? data : decoder.decode(new Uint8Array(data as ArrayBuffer));
      queue.push(encoder.encode(`${text}\n`));
      notify();
    });
    let refused = false;
    ws.addEventListener('error', () => {
      if (!opened) {
        if (refused) return;
        refused = true;
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) {
          reject(failure ?? signal.reason ?? new Error('aborted'));
          return;
        }
        probeRefusal(req.url, signal, probe).then(
          (reply) =>
            reply ? resolve(reply) : reject(new Error('the WebSocket upstream could not be opened')),
          () => reject(new Error('the WebSocket upstream could not be opened')),
        );
        return;
      }
      ended = true;
      notify();
    });
    ws.addEventListener('close', () => {
      signal.removeEventListener('abort', onAbort);
      ended = true;
      notify();
    });
    const next = async (): Promise<{ done: true } | { done: false; value: Uint8Array }> => {
      for (;;) {
        const v = queue.shift();
        if (v) return { done: false, value: v };
        if (ended) {
          if (failure && !cancelled) throw failure;
          return { done: true };
        }
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    };
    let cancelled = false;
    async function bytes(): Promise<Uint8Array> {
      const parts: Uint8Array[] = [];
      for (;;) {
        const r = await next();
        if (r.done) break;
        parts.push(r.value);
      }
      return concat(parts);
    }
    function chunks(): UpstreamChunks {
      return {
        read: next,
        async cancel() {
          cancelled = true;
          ended = true;
          try {
            ws.close();
          } catch {
            // already closed
          }
          notify();
        },
      };
    }
  });
}

/** Refusals a probe reports: credentials (401), a forbidden call (403, Spark's stale date), limits (429). */
const REFUSALS = new Set([401, 403, 429]);

/** The refusal behind a failed WebSocket handshake, read over HTTP(S); null when there was none to read. */
async function probeRefusal(
  url: string,
  signal: AbortSignal,
  probe: typeof fetch,
): Promise<UpstreamReply | null> {
  const u = new URL(url);
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') return null;
  u.protocol = u.protocol === 'ws:' ? 'http:' : 'https:';
  const res = await probe(u.toString(), { method: 'GET', signal });
  const body = new Uint8Array(await res.arrayBuffer());
  if (!REFUSALS.has(res.status)) return null;
  return {
    status: res.status,
    headers: res.headers,
    bytes: async () => body,
    text: async () => decoder.decode(body),
    chunks: () => null,
  };
}
