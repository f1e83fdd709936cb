/**
 * Stream conversions as plain synchronous functions. A converter gets each upstream chunk and enqueues what the
 * client should receive before it returns, so the relay runs a chain of them inline on every upstream read (no
 * Web Stream, pipe or promise per stage between an upstream frame and the client).
 */

/** Where a converter puts its output (a TransformStream controller is one). */
export type FrameSink = { enqueue(chunk: Uint8Array): void };

/** Upstream bytes in, client bytes out; everything a chunk produces is enqueued before `transform` returns. */
export type FrameTransformer = {
  transform(chunk: Uint8Array, out: FrameSink): void;
  /** The upstream ended: emit what is still held. */
  flush?(out: FrameSink): void;
};

export type FrameRunner = {
  /** Feeds one upstream chunk through every stage; returns what came out of the last one (often nothing). */
  push(chunk: Uint8Array): Uint8Array[];
  /** Flushes the stages in order (each one's tail goes through the stages after it); returns the output. */
  end(): Uint8Array[];
};

/** Runs `stages` as a chain: what one enqueues is fed to the next at once. */
export function frameRunner(stages: readonly FrameTransformer[]): FrameRunner {
  let out: Uint8Array[] = [];
  const collect: FrameSink = {
    enqueue(chunk) {
      out.push(chunk);
    },
  };
  // sinks[i] receives stage i's output.
  const sinks: FrameSink[] = new Array(stages.length);
  for (let i = stages.length - 1; i >= 0; i--) {
    const next = stages[i + 1];
    const nextSink = sinks[i + 1] ?? collect;
    sinks[i] = next ? { enqueue: (chunk) => next.transform(chunk, nextSink) } : collect;
  }
  const take = () => {
    const r = out;
    out = [];
    return r;
  };
  return {
    push(chunk) {
      if (stages.length === 0) return [chunk];
      stages[0]!.transform(chunk, sinks[0]!);
      return take();
    },
    end() {
      for (let i = 0; i < stages.length; i++) stages[i]!.flush?.(sinks[i]!);
      return take();
    },
  };
}
