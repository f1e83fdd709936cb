/**
 * The few places where Node and Deno differ (ARCHITECTURE.md §1): runtime detection, the HTTP listener,
 * signals and exit. Everything else in the relay uses web-standard or `node:` APIs that both provide.
 */
import type { AddressInfo } from 'node:net';
import process from 'node:process';

export type RuntimeName = 'node' | 'deno';

/** The slice of the Deno namespace the relay uses (tsconfig types are Node's; this file must also run on Deno). */
type DenoHttpServer = {
  addr: { hostname: string; port: number };
  finished: Promise<void>;
  shutdown(): Promise<void>;
};
type DenoNamespace = {
  version: { deno: string };
  serve(
    options: {
      port: number;
      hostname: string;
      onListen?: (addr: { hostname: string; port: number }) => void;
    },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): DenoHttpServer;
  upgradeWebSocket(
    request: Request,
    options?: { protocol?: string },
  ): { socket: WebSocket; response: Response };
  addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code: number): never;
};

const deno = (globalThis as { Deno?: DenoNamespace }).Deno;

export const runtime: { name: RuntimeName; version: string } = deno
  ? { name: 'deno', version: deno.version.deno }
  : { name: 'node', version: process.versions.node };

/** What the listener knows about the connection; passed to Hono as its `env`. */
export type ConnInfo = { remoteAddress: string };

export type FetchHandler = (request: Request, conn: ConnInfo) => Response | Promise<Response>;

/**
 * The WebSocket of an accepted upgrade: the WHATWG WebSocket surface both runtimes give (`ws`'s WebSocket on
 * Node, the standard one on Deno). `binaryType` is set to 'arraybuffer' before it is handed over.
 */
export type ServerWebSocket = Pick<
  WebSocket,
  'send' | 'close' | 'readyState' | 'binaryType' | 'addEventListener' | 'protocol' | 'bufferedAmount'
>;

/**
 * What the upgrade handler decides for a WebSocket upgrade request: a refusal (any HTTP response, sent instead
 * of the switch), or acceptance with the subprotocol to select and the callback that takes the socket.
 * null: not a WebSocket route; the request goes to the fetch handler.
 */
export type UpgradeDecision =
  | Response
  | {
      protocol: string | null;
      accept(socket: ServerWebSocket): void;
      /** The handshake could not complete (the client left while it was decided): undo what was set up. */
      abandon(): void;
    }
  | null;

export type UpgradeHandler = (request: Request, conn: ConnInfo) => Promise<UpgradeDecision>;

/** True for a WebSocket handshake (RFC 6455 §4.1: GET with `Upgrade: websocket`). */
export function isWebSocketUpgrade(request: Request): boolean {
  return request.method === 'GET' && request.headers.get('upgrade')?.toLowerCase() === 'websocket';
}

export type HttpListener = {
  /** The bound port (useful with port 0). */
  port: number;
  hostname: string;
  /**
   * Stops accepting connections and waits for in-flight requests (streams included) up to `drainMs`,
   * then closes what is left.
   */
  close(drainMs?: number): Promise<void>;
};

export type ServeOptions = {
  port: number;
  hostname: string;
  /** WebSocket upgrades (the realtime API): decided before the switch, so a refusal is a plain HTTP answer. */
  upgrade?: UpgradeHandler;
  /** Largest WebSocket message taken from a client (Node; `ws`'s own default is 100 MiB). */
  wsMaxPayload?: number;
};

/**
 * Serves `fetchHandler` with `Deno.serve` on Deno and `@hono/node-server` on Node. WebSocket upgrades go to
 * `opts.upgrade`: on Deno inside the fetch handler (Deno.upgradeWebSocket), on Node on the server's 'upgrade'
 * event (the `ws` package in noServer mode).
 */
export async function serveHttp(fetchHandler: FetchHandler, opts: ServeOptions): Promise<HttpListener> {
  if (deno) return serveDeno(deno, fetchHandler, opts);
  return serveNode(fetchHandler, opts);
}

async function serveDeno(
  d: DenoNamespace,
  fetchHandler: FetchHandler,
  opts: ServeOptions,
): Promise<HttpListener> {
  let server: DenoHttpServer | undefined;
  const { upgrade } = opts;
  const handle = async (req: Request, conn: ConnInfo): Promise<Response> => {
    if (upgrade && isWebSocketUpgrade(req)) {
      const decision = await upgrade(req, conn);
      if (decision instanceof Response) return decision;
      if (decision) {
        const { socket, response } = d.upgradeWebSocket(
          req,
          decision.protocol ? { protocol: decision.protocol } : {},
        );
        socket.binaryType = 'arraybuffer';
        decision.accept(socket);
        return response;
      }
    }
    return fetchHandler(req, conn);
  };
  const addr = await new Promise<{ hostname: string; port: number }>((resolve, reject) => {
    try {
      server = d.serve({ port: opts.port, hostname: opts.hostname, onListen: resolve }, (req, info) =>
        handle(req, { remoteAddress: info.remoteAddr.hostname }),
      );
    } catch (err) {
      reject(err);
    }
  });
  const s = server!;
  return {
    port: addr.port,
    hostname: opts.hostname,
    async close(drainMs = 10_000) {
      // shutdown() stops listening and resolves once in-flight requests finish.
      await Promise.race([s.shutdown(), delay(drainMs)]);
    },
  };
}

async function serveNode(fetchHandler: FetchHandler, opts: ServeOptions): Promise<HttpListener> {
  const { serve } = await import('@hono/node-server');
  const http = await new Promise<import('node:http').Server>((resolve, reject) => {
    const server = serve(
      {
        fetch: (req, env: { incoming?: { socket?: { remoteAddress?: string } } }) =>
          fetchHandler(req, { remoteAddress: env.incoming?.socket?.remoteAddress ?? '' }),
        port: opts.port,
        hostname: opts.hostname,
      },
      () => resolve(server as import('node:http').Server),
    );
    server.once('error', reject);
  });
  if (opts.upgrade) await handleNodeUpgrades(http, opts.upgrade, opts.hostname, opts.wsMaxPayload);
  const { port } = http.address() as AddressInfo;
  return {
    port,
    hostname: opts.hostname,
    async close(drainMs = 10_000) {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      // Idle keep-alive sockets would hold close() open; busy ones finish their response first.
      http.closeIdleConnections();
      const idleSweep = setInterval(() => http.closeIdleConnections(), 250);
      const timedOut = await Promise.race([closed.then(() => false), delay(drainMs).then(() => true)]);
      clearInterval(idleSweep);
      if (timedOut) {
        http.closeAllConnections();
        await closed;
      }
    },
  };
}

/**
 * Node: upgrade requests arrive on the server's 'upgrade' event with the raw socket. The handler sees them as a
 * web Request; a refusal is written to the socket as an HTTP/1.1 response, an acceptance completes the
 * handshake with `ws` (noServer: no second listener, no path matching of its own).
 */
async function handleNodeUpgrades(
  server: import('node:http').Server,
  upgrade: UpgradeHandler,
  hostname: string,
  maxPayload: number | undefined,
): Promise<void> {
  const { WebSocketServer } = await import('ws');
  const chosen = new WeakMap<object, string | null>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    ...(maxPayload ? { maxPayload } : {}),
    // The protocol the handler chose for this request (false: none).
    handleProtocols: (_offered, req) => chosen.get(req) ?? false,
  });
  server.on(
    'upgrade',
    (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) for (const item of v) headers.append(k, item);
        else if (v !== undefined) headers.set(k, v);
      }
      const host = req.headers.host ?? hostname;
      const request = new Request(`http://${host}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
      });
      socket.on('error', () => socket.destroy());
      const refuse = async (res: Response) => {
        const body = new Uint8Array(await res.arrayBuffer());
        const lines = [`HTTP/1.1 ${res.status} ${res.statusText || 'Error'}`];
        for (const [k, v] of res.headers)
          if (k !== 'content-length' && k !== 'connection') lines.push(`${k}: ${v}`);
        lines.push(`content-length: ${body.byteLength}`, 'connection: close', '', '');
        socket.write(lines.join('\r\n'));
        socket.end(body);
      };
      upgrade(request, { remoteAddress: req.socket.remoteAddress ?? '' }).then(
        async (decision) => {
          if (decision instanceof Response) return refuse(decision);
          if (!decision)
            return refuse(Response.json({ error: { message: 'not a WebSocket route' } }, { status: 404 }));
          chosen.set(req, decision.protocol);
          wss.handleUpgrade(req, socket, head, (ws) => {
            ws.binaryType = 'arraybuffer';
            decision.accept(ws as unknown as ServerWebSocket);
          });
        },
        () => refuse(Response.json({ error: { message: 'internal error' } }, { status: 500 })),
      );
    },
  );
}

/** Calls `handler` once on the first SIGINT or SIGTERM. */
export function onShutdownSignal(handler: (signal: 'SIGINT' | 'SIGTERM') => void): void {
  let fired = false;
  const fire = (signal: 'SIGINT' | 'SIGTERM') => {
    if (fired) return;
    fired = true;
    handler(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    if (deno) deno.addSignalListener(signal, () => fire(signal));
    else process.once(signal, () => fire(signal));
  }
}

export function exit(code: number): never {
  if (deno) return deno.exit(code);
  return process.exit(code);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    // A drain timer must not keep an otherwise finished process alive.
    (t as { unref?: () => void }).unref?.();
  });
}

/**
 * Gives back the heap that start-up grew but no longer uses, on Node: one full, compacting collection
 * ("last-resort": V8 also shrinks the young generation and releases emptied pages).
 *
 * Loading ~1,000 modules and creating the clients allocates a lot that survives a few collections, so V8 grows
 * the young generation to its maximum (2 × 16 MB) and the old one well past the ~20 MB that stays live. V8's
 * memory reducer gives that back by itself after ~10-20 s without allocation; doing it once here makes the
 * process small from the moment it is ready (~50 MB less RSS right after start). It costs one collection
 * (tens of ms) at start and nothing per request: under load the heap grows again exactly as it would after
 * the memory reducer ran.
 *
 * `gc` is exposed only inside a throwaway context (`--expose-gc` for the whole process would let any code
 * force collections). No-op on Deno, which has its own heap heuristics.
 */
export async function releaseStartupMemory(): Promise<void> {
  if (deno) return;
  const exposed = (globalThis as { gc?: (opts: object) => void }).gc;
  if (exposed) return exposed({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const [v8, vm] = await Promise.all([import('node:v8'), import('node:vm')]);
  v8.setFlagsFromString('--expose-gc');
  try {
    const gc = vm.runInNewContext('gc') as (opts: object) => void;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}
