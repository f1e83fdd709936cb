/**
 * Typed domain errors. Domain functions throw these; each transport maps them once
 * (HTTP: app/utils/envelope.server.ts, gRPC: app/grpc, forms: the route's submission reply).
 */
export type FieldErrors = Record<string, string[]>;

export class DomainError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = new.target.name;
    this.status = status;
  }
}

export class InputError extends DomainError {
  readonly fieldErrors: FieldErrors;
  constructor(message: string, fieldErrors: FieldErrors = {}) {
    super(message, 400);
    this.fieldErrors = fieldErrors;
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'unauthorized') {
    super(message, 401);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'forbidden') {
    super(message, 403);
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'not found') {
    super(message, 404);
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** A per-client limit was hit (HTTP 429); `retryAfter` in seconds when known. */
export class TooManyRequestsError extends DomainError {
  readonly retryAfter: number | null;
  constructor(message = 'too many requests, try again later', retryAfter: number | null = null) {
    super(message, 429);
    this.retryAfter = retryAfter;
  }
}
