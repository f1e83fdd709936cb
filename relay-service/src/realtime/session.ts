/**
 * One realtime session: the client's socket and the upstream's, piped both ways unchanged (text and binary),
 * with each `response.done` handed to billing once. Runtime-neutral: both sockets have the WHATWG WebSocket
 * surface.
 *
 * Ending (ADR 030): when the client goes away (or the relay stops) while responses are in flight, the upstream
 * is asked to cancel them and given `graceMs` to answer with their `response.done` (OpenAI reports the usage of a
 * cancelled response there), so what was produced is billed from the upstream's own figures; a response still
 * open after that, or when the upstream itself closes, is billed from the text it streamed, counted locally.
 *
 * Backpressure (ADR 039): each direction stops reading its sender while its receiver has more than the high-water
 * mark waiting; a receiver that stays behind (past the hard limit, or above the mark for the stall time) ends
 * the session with an `error` event to the client, the usual cancel and bill, and close code 1008 (the client
 * does not read) or 1011 (the upstream does not read).
 */

import type { Usage } from '../core/usage.ts';
import type { ServerWebSocket } from '../runtime.ts';
import { Flow, type FlowLimits, type Overflow } from './flow.ts';
import type { BufferedSocket } from './upstream.ts';
import { errorEvent, eventInfo } from './usage.ts';

const OPEN = 1;
const CONNECTING = 0;

/** What the session asks of billing. */
export type SessionBilling = {
  /**
   * Bills one response. `usage` null: the upstream reported none (count locally from `text`). Resolves false
   * when the session must end (the balance cannot cover another response); `reason` is sent to the client.
   */
  response(r: {
    responseId: string;
    usage: Usage | null;
    text: string;
    startedAt: number;
    firstTokenAt: number | null;
  }): Promise<{ ok: true } | { ok: false; type: string; code: string; message: string }>;
  /** The session ended: give back what is still held. */
  end(): Promise<void>;
};

export type SessionOptions = {
  client: ServerWebSocket;
  upstream: BufferedSocket;
  billing: SessionBilling;
  /** No message either way for this long ends the session. */
  idleMs: number;
  /** How long in-flight responses may take to report their usage after a cancel. */
  graceMs: number;
  /** Backpressure limits of both directions (defaults: DEFAULT_FLOW_LIMITS). */
  limits?: FlowLimits;
  now?: () => number;
  onError?: (message: string, err?: unknown) => void;
};

/** The relay's defaults (RELAY_STREAM_BUFFER_BYTES, RELAY_STREAM_BUFFER_MAX_BYTES, RELAY_STREAM_STALL_MS). */
export const DEFAULT_FLOW_LIMITS: FlowLimits = { highWater: 1 << 20, max: 16 << 20, stallMs: 30_000 };

type InFlight = { startedAt: number; firstTokenAt: number | null; text: string };

/** Codes the WHATWG API lets an application send (RFC 6455 §7.4): 1000 and 3000-4999. */
const appCode = (code: number) => (code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000);

/** Closes with `code`; where the API refuses it (Deno: 1008, 1011), with 1000. */
function safeClose(socket: ServerWebSocket, code: number, reason: string): void {
  if (socket.readyState > OPEN) return;
  for (const c of [code, 1000]) {
    try {
      socket.close(c, reason.slice(0, 120));
      return;
    } catch {
      // Not a code this API sends: try the next.
    }
  }
  try {
    socket.close();
  } catch {
    // Already closing.
  }
}

export class RealtimeSession {
  readonly #o: SessionOptions;
  readonly #now: () => number;
  readonly #inFlight = new Map<string, InFlight>();
  readonly #billed = new Set<string>();
  /** Billing runs one response at a time, in the order the upstream finished them. */
  #billingChain: Promise<void> = Promise.resolve();
  #ending: Promise<void> | null = null;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #clientOpen: Promise<void>;
  /** Resolves when no response is in flight any more (during the grace period). */
  #settledWaiter: (() => void) | null = null;
  readonly done: Promise<void>;
  #resolveDone!: () => void;
  /** Upstream -> client, and client -> upstream. */
  readonly #down: Flow;
  readonly #up: Flow;

  constructor(opts: SessionOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
    const limits = opts.limits ?? DEFAULT_FLOW_LIMITS;
    this.#down = new Flow(
      opts.upstream.socket,
      opts.client,
      limits,
      (o) => this.#overflow('client', o),
      this.#now,
    );
    this.#up = new Flow(
      opts.client,
      opts.upstream.socket,
      limits,
      (o) => this.#overflow('upstream', o),
      this.#now,
    );
    this.done = new Promise((r) => {
      this.#resolveDone = r;
    });
    const { client } = opts;
    // Deno hands over the socket before the 101 has gone out; it is usable once open.
    this.#clientOpen =
      client.readyState === CONNECTING
        ? new Promise((resolve) => client.addEventListener('open', () => resolve(), { once: true }))
        : Promise.resolve();
  }

  start(): void {
    const { client, upstream } = this.#o;
    this.#touch();
    client.addEventListener('message', (ev) => {
      this.#touch();
      const s = upstream.socket;
      if (s.readyState !== OPEN || this.#up.overflowed) return;
      s.send(ev.data as string | ArrayBuffer);
      this.#up.sent();
    });
    client.addEventListener('close', () => void this.end('client closed'));
    client.addEventListener('error', () => void this.end('client error'));
    void this.#clientOpen.then(() =>
      upstream.attach(
        (data) => this.#fromUpstream(data),
        (code, reason) => void this.#upstreamClosed(code, reason),
      ),
    );
  }

  #touch(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.end('idle timeout'), this.#o.idleMs);
    (this.#idle as { unref?: () => void }).unref?.();
  }

  #fromUpstream(data: unknown): void {
    this.#touch();
    if (typeof data === 'string') {
      const info = eventInfo(data);
      if (info?.responseId) {
        if (info.type === 'response.created' && !this.#inFlight.has(info.responseId))
          this.#inFlight.set(info.responseId, { startedAt: this.#now(), firstTokenAt: null, text: '' });
        const open = this.#inFlight.get(info.responseId);
        if (open && info.text) {
          open.text += info.text;
          open.firstTokenAt ??= this.#now();
        }
        if (open && info.type.endsWith('.delta')) open.firstTokenAt ??= this.#now();
      }
      this.#toClient(data);
      if (info?.type === 'response.done') {
        const id = info.responseId ?? `unnamed-${this.#billed.size + this.#inFlight.size}`;
        this.#bill(id, info.usage);
      }
      return;
    }
    this.#toClient(data as ArrayBuffer);
  }

  #toClient(data: string | ArrayBuffer): void {
    const { client } = this.#o;
    if (client.readyState !== OPEN || this.#down.overflowed) return;
    client.send(data);
    this.#down.sent();
  }

  /** A receiver stayed behind: tell the client why, then end the session (cancel, bill, close). */
  #overflow(behind: 'client' | 'upstream', o: Overflow): void {
    const limits = this.#o.limits ?? DEFAULT_FLOW_LIMITS;
    const why =
      o.stalledMs === null
        ? `${o.backlog} bytes waiting, over the limit of ${limits.max}`
        : `${o.backlog} bytes waiting for more than ${limits.stallMs} ms`;
    const message =
      behind === 'client'
        ? `the client is not reading the session's events (${why}); the realtime session ends here`
        : `the upstream is not taking the client's events (${why}); the realtime session ends here`;
    this.#o.onError?.(message);
    const { client } = this.#o;
    if (client.readyState === OPEN && !this.#ending)
      client.send(
        errorEvent(
          behind === 'client'
            ? { type: 'invalid_request_error', code: 'client_too_slow', message }
            : { type: 'server_error', code: 'upstream_too_slow', message },
        ),
      );
    void this.end(
      behind === 'client' ? 'the client is not reading' : 'the upstream is not reading',
      behind === 'client' ? 1008 : 1011,
    );
  }

  /** Queues the bill of one finished response (at most once per response id). */
  #bill(responseId: string, usage: Usage | null): void {
    if (this.#billed.has(responseId)) return;
    this.#billed.add(responseId);
    const open = this.#inFlight.get(responseId);
    this.#inFlight.delete(responseId);
    if (this.#inFlight.size === 0) this.#settledWaiter?.();
    const r = {
      responseId,
      usage,
      text: open?.text ?? '',
      startedAt: open?.startedAt ?? this.#now(),
      firstTokenAt: open?.firstTokenAt ?? null,
    };
    this.#billingChain = this.#billingChain.then(async () => {
      try {
        const outcome = await this.#o.billing.response(r);
        if (!outcome.ok && !this.#ending) {
          const { client } = this.#o;
          if (client.readyState === OPEN) client.send(errorEvent(outcome));
          void this.end(outcome.message, 4003);
        }
      } catch (err) {
        this.#o.onError?.(`billing response ${responseId} failed`, err);
      }
    });
  }

  #upstreamClosed(code: number, reason: string): Promise<void> {
    // Whatever is still open will never report usage: it is billed from what it streamed (in end()). The client
    // gets the upstream's close code when the WebSocket API lets an application send it.
    return this.end(reason || 'upstream closed', appCode(code));
  }

  /** Ends the session (idempotent); resolves once every response is billed and the hold is given back. */
  end(reason: string, clientCode = 1000): Promise<void> {
    this.#ending ??= (async () => {
      clearTimeout(this.#idle);
      // Both sockets are read again (the upstream's answers to the cancels must get through); a receiver past
      // the hard limit still gets nothing more.
      this.#down.stop();
      this.#up.stop();
      const { client, upstream } = this.#o;
      const up = upstream.socket;
      if (this.#inFlight.size > 0 && up.readyState === OPEN) {
        // Ask the upstream to stop what it is producing and wait a moment for the usage of it.
        for (const id of this.#inFlight.keys())
          up.send(JSON.stringify({ type: 'response.cancel', response_id: id }));
        await new Promise<void>((resolve) => {
          this.#settledWaiter = resolve;
          const t = setTimeout(resolve, this.#o.graceMs);
          (t as { unref?: () => void }).unref?.();
        });
      }
      for (const id of [...this.#inFlight.keys()]) this.#bill(id, null);
      safeClose(up, 1000, reason);
      // Billed before the client sees the end (as HTTP streams are): a relay killed in between leaves a cut
      // session, never an ended one whose responses were not billed.
      await this.#billingChain;
      await this.#o.billing.end().catch((err) => this.#o.onError?.('releasing the session hold failed', err));
      safeClose(client, clientCode, reason);
      this.#resolveDone();
    })();
    return this.#ending;
  }
}
