import { RelayError, type RelayErrorCode } from '#app/grpc/relay-client.server.ts';

// grpc-js details of a connection that never came up or broke, as opposed to the relay's own UNAVAILABLE
// answers (its store is down); an upstream's failure arrives as UNKNOWN (upstream_failed) with its reason.
const CONNECTION_FAILURE =
  /no connection established|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ECONNRESET|connection dropped|failed to connect|name resolution/i;

export type RelayFailure = {
  code: RelayErrorCode;
  /** Safe to show to the caller: never the relay's address. */
  message: string;
};

const RELAY_ERROR_CODES: ReadonlySet<string> = new Set<RelayErrorCode>([
  'unavailable',
  'deadline_exceeded',
  'cancelled',
  'unimplemented',
  'invalid_argument',
  'unauthenticated',
  'permission_denied',
  'not_found',
  'resource_exhausted',
  'upstream_failed',
  'failed',
]);

/**
 * A RelayError from any copy of the relay client module. `instanceof` alone is not enough: in the built product
 * the Remix server bundle holds its own copy of app/grpc/relay-client.server.ts, while the relay client in the
 * services was made by server/console.ts from the source module, so its errors are instances of another class
 * (every relay refusal of the playground was a plain-text 500). The name and a known code identify it.
 */
export function isRelayError(err: unknown): err is RelayError {
  if (err instanceof RelayError) return true;
  if (!(err instanceof Error) || err.name !== 'RelayError') return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && RELAY_ERROR_CODES.has(code);
}

/**
 * Reads an error of the relay client into a code and a message for the browser: the relay being unreachable,
 * slow or too old gets a fixed message; the relay's own refusals keep theirs. A non-RelayError is not a relay
 * failure: null (the caller rethrows it).
 */
export function relayFailure(err: unknown, relayAddress: string): RelayFailure | null {
  if (!isRelayError(err)) return null;
  const { code } = err;
  const prefix = `relay at ${relayAddress} is unavailable: `;
  const detail = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  if (code === 'deadline_exceeded') return { code, message: 'The relay service did not answer in time' };
  if (code === 'unimplemented')
    return { code, message: 'The relay service does not support this call (is it an older version?)' };
  if (code === 'cancelled') return { code, message: 'The relay call was cancelled' };
  if (code === 'unavailable' && CONNECTION_FAILURE.test(detail))
    return { code, message: 'The relay service is unavailable, try again later' };
  return { code, message: detail || 'relay call failed' };
}

/** Removes every secret (e.g. each line of a channel key) from a message meant for the browser. */
export function redact(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out;
}
