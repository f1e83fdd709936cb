/**
 * The client's address, for IP allow-lists, logs and per-IP limits (ADR 015). It comes from trusted hops only:
 *
 * - `TRUST_PROXY` says which peers are proxies whose `X-Forwarded-For` is believed: `false` (none: the socket
 *   address is the client), `true` or a hop count `N` (the N nearest hops are proxies), or a list of addresses,
 *   CIDR ranges and the names `loopback` / `private`. The address list is walked from the socket towards the
 *   left of `X-Forwarded-For`; the first hop that is not a trusted proxy is the client. Taking the right-most
 *   untrusted hop (never the left-most, which any client writes) is what makes the header unforgeable.
 * - The console's forwarding passes the address it determined in `x-switchyard-client`, keyed with an HMAC of
 *   `INTERNAL_API_SECRET`. A client cannot produce it, so the relay believes it from any peer, and only it.
 *
 * Node and Deno both provide `node:crypto`; the HMAC costs a few microseconds and only forwarded calls pay it.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** What `TRUST_PROXY` parses to: a hop count, or the addresses/ranges of the proxies. */
export type TrustProxy = boolean | number | readonly string[];

/** Header the console sets on forwarded calls: `<ip>;<base64url HMAC-SHA256>`. */
export const FORWARDED_CLIENT_HEADER = 'x-switchyard-client';

const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * Parses `TRUST_PROXY`. Throws an Error with a message for the configuration error when an entry is neither an
 * address, a CIDR range nor a known name.
 */
export function parseTrustProxy(value: string | TrustProxy): TrustProxy {
  if (typeof value === 'boolean' || typeof value === 'number') return value;
  let entries: string[];
  if (typeof value === 'string') {
    const v = value.trim();
    if (v === '' || v === 'false') return false;
    if (v === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v);
    entries = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  } else entries = [...value];
  for (const e of entries) {
    if (NAMED_RANGES[e]) continue;
    if (e.includes('/') ? !isCidr(e) : !ipaddr.isValid(e))
      throw new Error(
        `"${e}" is not true, false, a hop count, an IP address, a CIDR range, loopback or private`,
      );
  }
  return entries;
}

/** `TRUST_PROXY` in a process's environment schema (also accepts an already parsed value). */
export const trustProxyEnv = z
  .union([z.string(), z.boolean(), z.number().int().min(0), z.array(z.string())])
  .default(false)
  .transform((v, ctx): TrustProxy => {
    try {
      return parseTrustProxy(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

function isCidr(s: string): boolean {
  try {
    ipaddr.parseCIDR(s);
    return true;
  } catch {
    return false;
  }
}

type Trust = (address: string, hop: number) => boolean;

const compiled = new Map<string, Trust>();

/** `(address, hop) => trusted`; hop 0 is the socket peer. Compiled once per distinct setting. */
export function compileTrust(spec: TrustProxy): Trust {
  const key = typeof spec === 'object' ? spec.join(',') : String(spec);
  let trust = compiled.get(key);
  if (trust) return trust;
  if (typeof spec === 'object') {
    const ranges = spec
      .flatMap((e) => NAMED_RANGES[e] ?? [e])
      .map((e) => (e.includes('/') ? ipaddr.parseCIDR(e) : toRange(e)));
    trust = (address) => {
      const addr = parseIp(address);
      return (
        addr !== null &&
        ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits))
      );
    };
  } else {
    const hops = spec === true ? 1 : spec === false ? 0 : spec;
    trust = (_address, hop) => hop < hops;
  }
  compiled.set(key, trust);
  return trust;
}

function toRange(ip: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const addr = parseIp(ip)!;
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

function parseIp(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(ip)) return null;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
    return (addr as ipaddr.IPv6).toIPv4Address();
  return addr;
}

const unmap = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip);

/**
 * The client address from the socket peer and `X-Forwarded-For` under `trust`: walking from the peer towards
 * the left, the first hop that is not a trusted proxy. A hop that is not an IP address ends the walk at the
 * proxy that reported it (an address the relay cannot check is never the answer).
 */
export function resolveClientIp(
  peer: string,
  forwardedFor: string | null | undefined,
  trust: TrustProxy,
): string {
  const socket = unmap(peer);
  if (!forwardedFor || trust === false || trust === 0) return socket;
  const isTrusted = compileTrust(trust);
  if (!isTrusted(socket, 0)) return socket;
  const hops = forwardedFor.split(',');
  let client = socket;
  for (let i = hops.length - 1, hop = 1; i >= 0; i--, hop++) {
    const address = unmap((hops[i] ?? '').trim());
    if (!ipaddr.isValid(address)) return client;
    client = address;
    if (!isTrusted(address, hop)) return address;
  }
  return client;
}

function mac(secret: string, ip: string): string {
  return createHmac('sha256', secret).update(`switchyard client ip\n${ip}`).digest('base64url');
}

/** The value of FORWARDED_CLIENT_HEADER for `ip` (the console's forwarding sets it). */
export function signClientIp(secret: string, ip: string): string {
  return `${ip};${mac(secret, ip)}`;
}

/** The address in a FORWARDED_CLIENT_HEADER value when its HMAC is right; null otherwise. */
export function verifyClientIp(secret: string, value: string): string | null {
  const cut = value.lastIndexOf(';');
  if (!secret || cut <= 0) return null;
  const ip = value.slice(0, cut);
  const given = Buffer.from(value.slice(cut + 1));
  const expected = Buffer.from(mac(secret, ip));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return ipaddr.isValid(ip) ? ip : null;
}

export type ClientIpResolver = (peer: string, headers: Headers) => string;

/**
 * The relay's resolver: the console's signed address when present and valid, else the trusted-hop walk over
 * `X-Forwarded-For`. Without a secret the signed header is ignored.
 */
export function createClientIpResolver(opts: { trustProxy: TrustProxy; secret: string }): ClientIpResolver {
  const { trustProxy, secret } = opts;
  compileTrust(trustProxy);
  return (peer, headers) => {
    if (secret) {
      const signed = headers.get(FORWARDED_CLIENT_HEADER);
      if (signed) {
        const ip = verifyClientIp(secret, signed);
        if (ip) return ip;
      }
    }
    return resolveClientIp(peer, headers.get('x-forwarded-for'), trustProxy);
  };
}
