/**
 * Server-streaming counterpart of unary(): writes each item the handler yields, honours client cancellation
 * (the handler's signal aborts and iteration stops) and ends with a gRPC status mapped like unary errors.
 */
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from '../log.ts';
import { internalError, RpcError, toRpcError } from './errors.ts';
import type { CallContext } from './unary.ts';

export function serverStream<Req, Res>(
  opts: { log: Logger; method: string },
  handler: (request: Req, ctx: CallContext) => AsyncIterable<Res>,
): (call: ServerWritableStream<Req, Res>) => void {
  return (call) => {
    const controller = new AbortController();
    call.once('cancelled', () => controller.abort(new RpcError(1, 'cancelled by the client')));
    const deadline = call.getDeadline();
    const ctx: CallContext = {
      signal: controller.signal,
      metadata: call.metadata,
      deadline:
        deadline instanceof Date
          ? deadline
          : new Date(Number.isFinite(deadline) ? deadline : Date.now() + 3_600_000),
    };
    void (async () => {
      try {
        for await (const item of handler(call.request, ctx)) {
          if (controller.signal.aborted) return;
          if (!call.write(item)) await new Promise((resolve) => call.once('drain', resolve));
        }
        call.end();
      } catch (err) {
        if (controller.signal.aborted) return;
        const known = toRpcError(err);
        if (!known) opts.log.error(`${opts.method} failed`, err);
        const e = known ?? internalError();
        // grpc-js turns an 'error' event into the call's final status.
        call.emit('error', Object.assign(new Error(e.message), { code: e.code, details: e.message }));
      }
    })();
  };
}
