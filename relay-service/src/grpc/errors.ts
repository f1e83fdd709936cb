/**
 * The one mapper from errors to gRPC statuses (STYLE.md convention 4). Domain error classes (NotFoundError,
 * InputError, ...) are mapped here as they appear; anything unknown is INTERNAL with a generic message, so
 * internals reach the log, never the caller.
 */
import { status } from '@grpc/grpc-js';
import { RelayError } from '../core/errors.ts';

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
  if (err instanceof RelayError)
    // UNAVAILABLE means "this relay cannot serve now, try another": only the relay's own outage. An upstream
    // failure is UNKNOWN with its message, so the console shows the reason instead of "relay unavailable".
    return new RpcError(
      err.code === 'store_unavailable' ? status.UNAVAILABLE : grpcStatusFor(err.status),
      err.message,
    );
  return null;
}

export const internalError = () => new RpcError(status.INTERNAL, 'internal error');

/** HTTP status of a relay error → the gRPC code a client can act on. */
export function grpcStatusFor(http: number): status {
  if (http === 400 || http === 413) return status.INVALID_ARGUMENT;
  if (http === 401) return status.UNAUTHENTICATED;
  if (http === 403) return status.PERMISSION_DENIED;
  if (http === 404) return status.NOT_FOUND;
  if (http === 429) return status.RESOURCE_EXHAUSTED;
  if (http === 499) return status.CANCELLED;
  if (http === 501) return status.UNIMPLEMENTED;
  if (http >= 500) return status.UNKNOWN;
  return status.FAILED_PRECONDITION;
}
