/**
 * Short-lived upstream credentials derived from a channel key (ProviderAdaptor.credential): Baidu's OAuth access
 * token, Vertex AI's service-account token. One exchange at a time per channel key, reused until a minute before
 * it expires, dropped when the upstream refuses it (401), so a rotated or revoked credential heals on the next call.
 */
import type { ChannelConfig, Credential, ProviderAdaptor, UpstreamRequest } from '../providers/types.ts';
import { RelayError } from './errors.ts';
import type { UpstreamClient } from './upstream-client.ts';

/** A credential this close to its expiry is renewed before use. */
const RENEW_BEFORE_MS = 60_000;
const MAX_ENTRIES = 10_000;

export class CredentialCache {
  readonly #entries = new Map<string, Credential>();
  readonly #pending = new Map<string, Promise<Credential>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The channel with `credential` set when its adaptor has an exchange; the channel itself otherwise. */
  async resolve(
    adaptor: ProviderAdaptor,
    channel: ChannelConfig,
    client: UpstreamClient,
    signal?: AbortSignal,
  ): Promise<ChannelConfig> {
    const exchange = adaptor.credential;
    if (!exchange) return channel;
    const key = cacheKey(adaptor, channel);
    const cached = this.#entries.get(key);
    if (cached && cached.expiresAtMs - RENEW_BEFORE_MS > this.#now())
      return { ...channel, credential: cached.value };
    let pending = this.#pending.get(key);
    if (!pending) {
      // Stored once by the exchange itself; callers waiting on the same exchange only read its result.
      pending = this.#exchange(adaptor, channel, client, signal)
        .then((cred) => {
          if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
          this.#entries.set(key, cred);
          return cred;
        })
        .finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    const cred = await pending;
    return { ...channel, credential: cred.value };
  }

  /** Forgets the channel's credential (the upstream answered 401 with it). */
  invalidate(adaptor: ProviderAdaptor, channel: ChannelConfig): void {
    if (adaptor.credential) this.#entries.delete(cacheKey(adaptor, channel));
  }

  async #exchange(
    adaptor: ProviderAdaptor,
    channel: ChannelConfig,
    client: UpstreamClient,
    signal?: AbortSignal,
  ): Promise<Credential> {
    const exchange = adaptor.credential!;
    const now = this.#now();
    let req: UpstreamRequest;
    try {
      const built = exchange.request(channel, now);
      req = built instanceof Promise ? await built : built;
    } catch (err) {
      // A key that cannot be used at all (not "AK|SK", a broken service-account JSON): the admin's to fix.
      throw new RelayError({
        status: 500,
        message: `channel ${channel.id}: the key cannot be used: ${(err as Error).message}`,
        type: 'new_api_error',
        code: 'channel_key_invalid',
      });
    }
    const res = await client.send(req, signal ?? AbortSignal.timeout(30_000));
    const bodyText = await res.text();
    if (res.status < 200 || res.status >= 300) {
      const e = adaptor.parseError({ status: res.status, headers: res.headers, bodyText });
      throw new RelayError({
        status: res.status === 400 || res.status === 401 || res.status === 403 ? 401 : 502,
        message: `the upstream refused the channel credential: ${e.message}`,
        type: e.type || 'authentication_error',
        code: e.code,
      });
    }
    try {
      return exchange.parse({ status: res.status, bodyText }, now);
    } catch (err) {
      // A 2xx without a usable credential (no access_token): the provider's fault, not an unreachable upstream.
      throw new RelayError({
        status: 502,
        message: `channel ${channel.id}: the credential exchange gave no usable credential: ${(err as Error).message}`,
        type: 'upstream_error',
        code: 'channel_credential_invalid',
      });
    }
  }
}

function cacheKey(adaptor: ProviderAdaptor, channel: ChannelConfig): string {
  return `${adaptor.id}\u0000${channel.baseUrl}\u0000${channel.key}`;
}

/** The relay's process-wide cache (the pipeline, channel tests, model lists and balances share one). */
export const credentials = new CredentialCache();

/**
 * buildRequest's result: the request itself for synchronous adaptors (no Promise on the hot path), a Promise for
 * those that sign asynchronously. A throw becomes a RelayError naming the channel (channel_config_invalid).
 */
export function buildUpstreamRequest(
  adaptor: ProviderAdaptor,
  channel: ChannelConfig,
  input: Parameters<ProviderAdaptor['buildRequest']>[1],
): UpstreamRequest | Promise<UpstreamRequest> {
  try {
    const built = adaptor.buildRequest(channel, input);
    return built instanceof Promise
      ? built.catch((err: unknown) => Promise.reject(configError(channel, err)))
      : built;
  } catch (err) {
    throw configError(channel, err);
  }
}

function configError(channel: ChannelConfig, err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  // The adaptor could not use the channel as configured (a key not of the form "AK|SK|Region", no base URL):
  // the admin's to fix, named clearly instead of passing for an unreachable upstream; another channel may serve.
  return new RelayError({
    status: 500,
    message: `channel ${channel.id} cannot be used as configured: ${(err as Error).message.replace(/^channel \d+: /, '')}`,
    type: 'new_api_error',
    code: 'channel_config_invalid',
  });
}
