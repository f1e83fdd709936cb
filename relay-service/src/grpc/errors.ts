/**
 * The one mapper from errors to gRPC statuses (STYLE.md convention 4). Domain error classes (NotFoundError,
 * InputError, ...) are mapped here as they appear; anything unknown is INTERNAL with a generic message, so
 * internals reach the log, never the caller.
 */
import { status } from '@grpc/grpc-js';

export class RpcError extends Error {
  override name = 'RpcError';
  readonly code: status;

  constructor(code: status, message: string) {
    super(message);
    this.code = code;
  }
}

/** null when `err` is not a known error (the caller logs it and answers INTERNAL). */
export function toRpcError(err: unknown): RpcError | null {
  if (err instanceof RpcError) return err;
  return null;
}

export const internalError = () => new RpcError(status.INTERNAL, 'internal error');
