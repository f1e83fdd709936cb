import { describe, expect, it } from 'vitest';
import type { ChannelConfig, ProviderAdaptor, UpstreamRequest } from '../providers/types.ts';
import { CredentialCache } from './credentials.ts';
import { RelayError } from './errors.ts';
import type { UpstreamClient, UpstreamReply } from './upstream-client.ts';

const channel = (key: string): ChannelConfig => ({
  id: 7,
  type: 15,
  name: 'c',
  key,
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  setting: {},
  paramOverride: {},
});

/** An exchange that answers `token-<n>` valid for `ttlMs`, counting the calls it saw. */
function exchangeAdaptor(ttlMs: number) {
  const seen: string[] = [];
  const adaptor = {
    id: 'test-exchange',
    channelTypes: [15],
    supports: () => true,
    buildRequest: () => {
      throw new Error('not used');
    },
    parseResponse: () => {
      throw new Error('not used');
    },
    streamConversion: () => {
      throw new Error('not used');
    },
    parseError: ({ status, bodyText }: { status: number; bodyText: string }) => ({
      status,
      message: bodyText,
      type: 'upstream_error',
      code: null,
    }),
    credential: {
      request: (ch: ChannelConfig): UpstreamRequest => {
        if (!ch.key.includes('|')) throw new Error('the key must be APIKey|SecretKey');
        return { url: `http://exchange/${ch.key}`, method: 'POST', headers: new Headers(), body: null };
      },
      parse: ({ bodyText }: { bodyText: string }, now: number) => ({
        value: bodyText,
        expiresAtMs: now + ttlMs,
      }),
    },
  } satisfies ProviderAdaptor;
  return { adaptor, seen };
}

function client(seen: string[], status = 200, delayMs = 0): UpstreamClient {
  return {
    async send(req): Promise<UpstreamReply> {
      seen.push(req.url);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const body = status === 200 ? `token-${seen.length}` : 'bad key pair';
      return {
        status,
        headers: new Headers(),
        bytes: async () => new TextEncoder().encode(body),
        text: async () => body,
        chunks: () => null,
      };
    },
  };
}

describe('CredentialCache', () => {
  it('exchanges once for concurrent calls and reuses the credential until a minute before expiry', async () => {
    let now = 1_000_000;
    const cache = new CredentialCache(() => now);
    const { adaptor, seen } = exchangeAdaptor(10 * 60_000);
    const c = client(seen, 200, 20);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => cache.resolve(adaptor, channel('a|b'), c)),
    );
    expect(results.map((r) => r.credential)).toEqual(Array(5).fill('token-1'));
    expect(seen).toHaveLength(1);
    now += 8 * 60_000;
    expect((await cache.resolve(adaptor, channel('a|b'), c)).credential).toBe('token-1');
    now += 60_001; // within a minute of expiry: renewed
    expect((await cache.resolve(adaptor, channel('a|b'), c)).credential).toBe('token-2');
    // Another key pair has its own credential.
    expect((await cache.resolve(adaptor, channel('c|d'), c)).credential).toBe('token-3');
  });

  it('drops a credential on invalidate (the upstream answered 401 with it)', async () => {
    const cache = new CredentialCache();
    const { adaptor, seen } = exchangeAdaptor(3_600_000);
    const c = client(seen);
    await cache.resolve(adaptor, channel('a|b'), c);
    cache.invalidate(adaptor, channel('a|b'));
    expect((await cache.resolve(adaptor, channel('a|b'), c)).credential).toBe('token-2');
  });

  it('a refused exchange and an unusable key are RelayErrors the pipeline can report, and nothing is cached', async () => {
    const cache = new CredentialCache();
    const { adaptor, seen } = exchangeAdaptor(3_600_000);
    const refused = cache.resolve(adaptor, channel('a|b'), client(seen, 401));
    await expect(refused).rejects.toBeInstanceOf(RelayError);
    await expect(refused).rejects.toMatchObject({ status: 401, message: /refused the channel credential/ });
    const badKey = cache.resolve(adaptor, channel('no-separator'), client(seen));
    await expect(badKey).rejects.toMatchObject({ code: 'channel_key_invalid', message: /APIKey\|SecretKey/ });
    expect((await cache.resolve(adaptor, channel('a|b'), client(seen))).credential).toMatch(/^token-/);
  });

  it('an adaptor without an exchange gets its channel back unchanged', async () => {
    const cache = new CredentialCache();
    const { adaptor } = exchangeAdaptor(1);
    const { credential: _none, ...plain } = adaptor;
    const ch = channel('k');
    expect(await cache.resolve(plain, ch, client([]))).toBe(ch);
  });
});
