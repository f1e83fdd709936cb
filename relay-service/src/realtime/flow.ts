/**
 * Backpressure for one direction of a realtime session (ADR 039): frames read from `source` are sent to `sink`;
 * what the sink has not yet written to the network (`bufferedAmount`) is the backlog this relay holds.
 *
 * - Backlog above `highWater`: stop reading the source (`pause()`: `ws` sockets on Node; TCP flow control then
 *   slows the sender) until the backlog falls to half of it.
 * - Backlog above `max`, or above `highWater` for longer than `stallMs`: `onOverflow` (the session ends).
 *
 * Deno's WebSocket cannot stop reading (no `pause()`); there the two limits alone bound the backlog.
 * Checking costs one `bufferedAmount` read per frame; a timer runs only while the backlog is high.
 */
import type { ServerWebSocket } from '../runtime.ts';

export type FlowLimits = {
  /** Backlog (bytes) above which the source is paused; reading resumes at half of it. */
  highWater: number;
  /** Backlog (bytes) that ends the session at once. */
  max: number;
  /** How long the backlog may stay above `highWater`. */
  stallMs: number;
};

export type Overflow = { backlog: number; stalledMs: number | null };

type Pausable = { pause?: () => void; resume?: () => void };

/** How often a high backlog is looked at again (there is no portable 'drain' event on a WebSocket). */
const RECHECK_MS = 10;

export class Flow {
  readonly #source: ServerWebSocket;
  readonly #sink: ServerWebSocket;
  readonly #limits: FlowLimits;
  readonly #onOverflow: (o: Overflow) => void;
  readonly #now: () => number;
  /** When the backlog went above the high-water mark (null: it is below). */
  #highSince: number | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #paused = false;
  #stopped = false;
  #overflowed = false;

  constructor(
    source: ServerWebSocket,
    sink: ServerWebSocket,
    limits: FlowLimits,
    onOverflow: (o: Overflow) => void,
    now: () => number = Date.now,
  ) {
    this.#source = source;
    this.#sink = sink;
    this.#limits = limits;
    this.#onOverflow = onOverflow;
    this.#now = now;
  }

  /** True once the limit was passed: the caller stops sending to the sink. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Call after each frame sent to the sink. */
  sent(): void {
    const backlog = this.#sink.bufferedAmount;
    if (backlog <= this.#limits.highWater) return;
    if (backlog > this.#limits.max) {
      this.#overflow(backlog, null);
      return;
    }
    if (this.#highSince !== null || this.#stopped) return;
    this.#highSince = this.#now();
    this.#setPaused(true);
    this.#timer = setInterval(() => this.#recheck(), RECHECK_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** No more flow control (the session is ending): the source is read again; the hard limit still applies. */
  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #recheck(): void {
    const backlog = this.#sink.bufferedAmount;
    if (backlog > this.#limits.max) {
      this.#overflow(backlog, null);
      return;
    }
    if (backlog <= this.#limits.highWater / 2 || this.#sink.readyState > 1) {
      this.#clear();
      return;
    }
    const stalledMs = this.#now() - (this.#highSince ?? this.#now());
    if (stalledMs > this.#limits.stallMs) this.#overflow(backlog, stalledMs);
  }

  #overflow(backlog: number, stalledMs: number | null): void {
    this.#clear();
    if (this.#overflowed) return;
    this.#overflowed = true;
    this.#onOverflow({ backlog, stalledMs });
  }

  #clear(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#highSince = null;
    this.#setPaused(false);
  }

  #setPaused(paused: boolean): void {
    if (this.#paused === paused) return;
    this.#paused = paused;
    const s = this.#source as unknown as Pausable;
    if (paused) s.pause?.();
    else s.resume?.();
  }
}
