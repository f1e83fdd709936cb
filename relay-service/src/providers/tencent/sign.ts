/**
 * Tencent Cloud API v3 signing (TC3-HMAC-SHA256, https://cloud.tencent.com/document/api/1729/101843), with
 * node:crypto (Deno supports it). No maintained standalone signer exists outside Tencent's whole SDK, so the
 * few steps are implemented here:
 * 1. canonical request: method, "/", "" (no query), the signed headers as `name:value\n` (names and values
 *    lower-cased, values trimmed, sorted by name), the signed header names joined by ";", the hex SHA-256 of the payload;
 * 2. string to sign: "TC3-HMAC-SHA256", the timestamp (seconds), the credential scope
 *    `<UTC date>/<service>/tc3_request`, the hex SHA-256 of the canonical request;
 * 3. key: HMAC chain "TC3"+SecretKey → date → service → "tc3_request"; signature = hex HMAC of the string;
 * 4. `Authorization: TC3-HMAC-SHA256 Credential=<SecretId>/<scope>, SignedHeaders=<names>, Signature=<hex>`.
 */
import { createHash, createHmac } from 'node:crypto';

export const TC3_ALGORITHM = 'TC3-HMAC-SHA256';

const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const hmac = (key: string | Uint8Array, s: string): Uint8Array =>
  createHmac('sha256', key).update(s, 'utf8').digest();

/** UTC date (YYYY-MM-DD) of a timestamp in seconds. */
export const tc3Date = (timestamp: number): string => new Date(timestamp * 1000).toISOString().slice(0, 10);

export type Tc3Input = {
  secretId: string;
  secretKey: string;
  service: string;
  /** Seconds since the epoch (X-TC-Timestamp). */
  timestamp: number;
  method: string;
  /** Headers to sign by lower-case name (content-type and host at least). */
  signedHeaders: Record<string, string>;
  payload: string;
};

export function canonicalRequest(input: Pick<Tc3Input, 'method' | 'signedHeaders' | 'payload'>): {
  canonical: string;
  names: string;
} {
  const entries = Object.entries(input.signedHeaders)
    .map(([k, v]) => [k.toLowerCase(), v.trim().toLowerCase()] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const names = entries.map(([k]) => k).join(';');
  const headers = entries.map(([k, v]) => `${k}:${v}\n`).join('');
  return {
    canonical: [input.method.toUpperCase(), '/', '', headers, names, sha256Hex(input.payload)].join('\n'),
    names,
  };
}

/** The signature (hex) and the Authorization header of a request. */
export function tc3Sign(input: Tc3Input): { signature: string; authorization: string } {
  const date = tc3Date(input.timestamp);
  const scope = `${date}/${input.service}/tc3_request`;
  const { canonical, names } = canonicalRequest(input);
  const stringToSign = [TC3_ALGORITHM, String(input.timestamp), scope, sha256Hex(canonical)].join('\n');
  const kDate = hmac(`TC3${input.secretKey}`, date);
  const kService = hmac(kDate, input.service);
  const kSigning = hmac(kService, 'tc3_request');
  const signature = createHmac('sha256', kSigning).update(stringToSign, 'utf8').digest('hex');
  return {
    signature,
    authorization: `${TC3_ALGORITHM} Credential=${input.secretId}/${scope}, SignedHeaders=${names}, Signature=${signature}`,
  };
}
