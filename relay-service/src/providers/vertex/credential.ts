/**
 * Vertex AI's key (channel type 41) is a Google service-account JSON credential (seed 001 §5). It is exchanged
 * for an OAuth access token with the JWT bearer grant (RFC 7523, Google's "Using OAuth 2.0 for Server to Server
 * Applications"): a JWT signed RS256 with the account's private key — `iss` the account's email, `scope`
 * cloud-platform, `aud` the token URI, `iat` now, `exp` one hour later, `kid` the private key id — is posted as
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>` to the credential's token_uri, which
 * answers `{access_token, expires_in, token_type: "Bearer"}`. Core caches the token until shortly before it
 * expires. Signing uses jose (WebCrypto: Node and Deno alike).
 */
import { importPKCS8, SignJWT } from 'jose';
import { isObject, str } from '../json.ts';
import type { ChannelConfig, Credential, UpstreamRequest } from '../types.ts';

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_LIFETIME_S = 3600;

export type ServiceAccount = {
  projectId: string;
  privateKeyId: string;
  privateKey: string;
  clientEmail: string;
  tokenUri: string;
};

const KEY_FORM =
  'a Vertex AI key must be the service-account JSON credential downloaded from Google Cloud ' +
  '({"type":"service_account","project_id","private_key_id","private_key","client_email","token_uri",...})';

/** The credential's fields; anything unusable throws an error naming what is wrong (never the key itself). */
export function parseServiceAccount(key: string): ServiceAccount {
  let json: unknown;
  try {
    json = JSON.parse(key);
  } catch {
    throw new Error(`${KEY_FORM}: the key is not JSON`);
  }
  if (!isObject(json)) throw new Error(`${KEY_FORM}: the key is not a JSON object`);
  if (json.type !== undefined && json.type !== 'service_account')
    throw new Error(`${KEY_FORM}: type is "${str(json.type)}", not "service_account"`);
  const missing = ['project_id', 'private_key', 'client_email'].filter((f) => !str(json[f]).trim());
  if (missing.length) throw new Error(`${KEY_FORM}: ${missing.join(', ')} missing`);
  const tokenUri = str(json.token_uri) || GOOGLE_TOKEN_URI;
  if (!/^https?:\/\//.test(tokenUri)) throw new Error(`${KEY_FORM}: token_uri is not an http(s) URL`);
  return {
    projectId: str(json.project_id).trim(),
    privateKeyId: str(json.private_key_id),
    // Keys pasted through some forms keep their newlines escaped.
    privateKey: str(json.private_key).replace(/\\n/g, '\n'),
    clientEmail: str(json.client_email).trim(),
    tokenUri,
  };
}

/** The signed JWT assertion for the token exchange. */
export async function signedAssertion(account: ServiceAccount, nowMs: number): Promise<string> {
  let key: CryptoKey;
  try {
    key = await importPKCS8(account.privateKey, 'RS256');
  } catch {
    throw new Error(`${KEY_FORM}: private_key is not a PEM PKCS#8 RSA private key`);
  }
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
    .setProtectedHeader({
      alg: 'RS256',
      typ: 'JWT',
      ...(account.privateKeyId ? { kid: account.privateKeyId } : {}),
    })
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + JWT_LIFETIME_S)
    .sign(key);
}

export async function tokenRequest(channel: ChannelConfig, nowMs: number): Promise<UpstreamRequest> {
  const account = parseServiceAccount(channel.key);
  const assertion = await signedAssertion(account, nowMs);
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
  return {
    url: account.tokenUri,
    method: 'POST',
    headers: new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }),
    body: form.toString(),
  };
}

export function parseToken(res: { status: number; bodyText: string }, nowMs: number): Credential {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  const token = isObject(json) ? str(json.access_token) : '';
  if (!token) throw new Error('the Google token endpoint answered without an access_token');
  const expiresIn =
    isObject(json) && typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
  return { value: token, expiresAtMs: nowMs + expiresIn * 1000 };
}
