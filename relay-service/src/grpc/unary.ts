/**
 * Wraps a unary handler so that every call has a deadline (the caller's, capped by a server default) and an
 * AbortSignal that fires on deadline or client cancellation. Errors become gRPC statuses: an RpcError keeps its
 * code, anything else is INTERNAL with a generic message (details go to the log, not the caller).
 */
import { type Metadata, type ServerUnaryCall, type sendUnaryData, status } from '@grpc/grpc-js';
import type { Logger } from '../log.ts';
import { internalError, RpcError, toRpcError } from './errors.ts';

export { RpcError } from './errors.ts';

export type CallContext = { signal: AbortSignal; metadata: Metadata; deadline: Date };

export type UnaryOptions = { log: Logger; method: string; defaultTimeoutMs?: number };

export function unary<Req, Res>(
  opts: UnaryOptions,
  handler: (request: Req, ctx: CallContext) => Promise<Res>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  const fallbackMs = opts.defaultTimeoutMs ?? 30_000;
  return (call, callback) => {
    const now = Date.now();
    const requested = call.getDeadline();
    const requestedMs = requested instanceof Date ? requested.getTime() : requested;
    const deadlineMs = Number.isFinite(requestedMs)
      ? Math.min(requestedMs, now + fallbackMs)
      : now + fallbackMs;
    if (deadlineMs <= now) {
      callback({ code: status.DEADLINE_EXCEEDED, details: 'deadline exceeded before the call started' });
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new RpcError(status.DEADLINE_EXCEEDED, 'deadline exceeded')),
      deadlineMs - now,
    );
    const onCancel = () => controller.abort(new RpcError(status.CANCELLED, 'cancelled by the client'));
    call.once('cancelled', onCancel);

    const ctx: CallContext = {
      signal: controller.signal,
      metadata: call.metadata,
      deadline: new Date(deadlineMs),
    };
    let settled = false;
    const finish = (err: RpcError | null, res?: Res) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.removeListener('cancelled', onCancel);
      if (err) callback({ code: err.code, details: err.message });
      else callback(null, res);
    };
    // Answer at the deadline even when the handler ignores the signal.
    controller.signal.addEventListener('abort', () => finish(controller.signal.reason as RpcError), {
      once: true,
    });
    handler(call.request, ctx).then(
      (res) => finish(null, res),
      (err: unknown) => {
        const known = toRpcError(err);
        if (known) return finish(known);
        if (controller.signal.aborted) return finish(controller.signal.reason as RpcError);
        opts.log.error(`${opts.method} failed`, err);
        finish(internalError());
      },
    );
  };
}
