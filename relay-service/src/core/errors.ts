/**
 * Errors of the relay pipeline in a neutral shape; each inbound front renders them in its own envelope
 * (OpenAI's `{"error":{...}}` today). `local` errors come from the gateway itself and never disable a channel.
 */
export type RelayErrorInit = {
  status: number;
  message: string;
  type: string;
  code?: string | null;
  param?: string | null;
  retryAfterMs?: number;
};

export class RelayError extends Error {
  override name = 'RelayError';
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly retryAfterMs: number | undefined;

  constructor(init: RelayErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type;
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export const unauthorized = (message: string, code = 'invalid_api_key') =>
  new RelayError({ status: 401, message, type: 'invalid_request_error', code });
export const forbidden = (message: string, code: string | null = null) =>
  new RelayError({ status: 403, message, type: 'invalid_request_error', code });
export const badRequest = (message: string, param: string | null = null) =>
  new RelayError({ status: 400, message, type: 'invalid_request_error', code: null, param });
