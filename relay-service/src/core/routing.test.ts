import { describe, expect, it } from 'vitest';
import { checkToken, extractKey, ipAllowed, parseKey } from './auth.ts';
import { buildSnapshot, Catalog, selectChannel } from './catalog.ts';
import type { RelayError } from './errors.ts';
import type { AbilityRecord, ChannelRecord, TokenRecord, UserRecord } from './repo.ts';
import { tokenRecord, userRecord } from './testing.ts';
import { clientMessage, disableReason, isRetryable, mapStatus } from './upstream.ts';

const channel = (id: number, over: Partial<ChannelRecord> = {}): ChannelRecord => ({
  id,
  type: 1,
  name: `ch${id}`,
  key: 'k',
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  modelMapping: {},
  statusCodeMapping: {},
  setting: {},
  paramOverride: {},
  models: ['m'],
  groups: ['default'],
  autoBan: true,
  testModel: '',
  priority: 0,
  weight: 0,
  status: 1,
  tag: null,
  otherInfo: {},
  ...over,
});
const ability = (channelId: number, priority: number, weight = 0, model = 'm'): AbilityRecord => ({
  group: 'default',
  model,
  channelId,
  priority,
  weight,
});

describe('channel selection', () => {
  const snap = buildSnapshot(
    [channel(1, { priority: 10 }), channel(2, { priority: 10 }), channel(3), channel(4, { status: 3 })],
    [ability(1, 10, 0), ability(2, 10, 90), ability(3, 0), ability(4, 20)],
  );

  it('uses the highest priority tier, weighted with +10 smoothing, skipping disabled channels', () => {
    const counts = new Map<number, number>();
    let x = 0;
    for (let i = 0; i < 1100; i++) {
      x = (i + 0.5) / 1100; // evenly spread "random" draws
      const ch = selectChannel(snap, 'default', 'm', new Set(), () => x);
      counts.set(ch!.id, (counts.get(ch!.id) ?? 0) + 1);
    }
    // weights 0 and 90 split 10:100; channel 4 (priority 20) is auto-disabled, channel 3 is a lower tier.
    expect(counts.get(1)).toBe(100);
    expect(counts.get(2)).toBe(1000);
    expect(counts.has(3)).toBe(false);
    expect(counts.has(4)).toBe(false);
  });

  it('picks within a tier of 1,000 channels in proportion to weight + 10', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i + 1);
    const big = buildSnapshot(
      ids.map((id) => channel(id)),
      ids.map((id) => ability(id, 0, id % 3 === 0 ? 20 : 0)),
    );
    // Every third channel (333 of them) has weight 20 (share 30), the others 0 (share 10).
    const total = 333 * 30 + 667 * 10;
    const counts = new Map<number, number>();
    for (let i = 0; i < total; i++) {
      const x = (i + 0.5) / total;
      const ch = selectChannel(big, 'default', 'm', new Set(), () => x);
      counts.set(ch!.id, (counts.get(ch!.id) ?? 0) + 1);
    }
    for (const id of ids) expect(counts.get(id)).toBe(id % 3 === 0 ? 30 : 10);
    // A retry draws among the channels not tried yet, in the same proportions.
    expect(selectChannel(big, 'default', 'm', new Set([1]), () => 0)?.id).toBe(2);
    expect(selectChannel(big, 'default', 'm', new Set(ids.slice(0, 999)), () => 0.5)?.id).toBe(1000);
  });

  it('never picks a channel already tried, falling to the next tier, then null', () => {
    expect(selectChannel(snap, 'default', 'm', new Set([2]), () => 0.99)?.id).toBe(1);
    expect(selectChannel(snap, 'default', 'm', new Set([1, 2]), () => 0)?.id).toBe(3);
    expect(selectChannel(snap, 'default', 'm', new Set([1, 2, 3]), () => 0)).toBeNull();
    expect(selectChannel(snap, 'vip', 'm', new Set(), () => 0)).toBeNull();
  });

  it('a reload asked for during a load runs again after it, so a change committed meanwhile is seen', async () => {
    let table = [channel(1)];
    let reads = 0;
    let release!: () => void;
    const cat = new Catalog(async () => {
      reads++;
      const rows = table;
      if (reads === 1) await new Promise<void>((r) => (release = r));
      return { channels: rows, abilities: rows.map((c) => ability(c.id, 0)) };
    });
    const first = cat.reload();
    // The admin adds channel 2 while the first load (which read the old table) is still running.
    table = [channel(1), channel(2)];
    const second = cat.reload();
    const third = cat.reload();
    expect(third).toBe(second);
    release();
    await first;
    await second;
    expect(reads).toBe(2);
    expect(cat.snapshot.channels.has(2)).toBe(true);
  });

  it('drops an auto-disabled channel at once and brings it back when re-enabled', async () => {
    const channels = [channel(1, { priority: 5 }), channel(2)];
    const cat = new Catalog(async () => ({ channels, abilities: [ability(1, 5), ability(2, 0)] }));
    await cat.reload();
    expect(selectChannel(cat.snapshot, 'default', 'm', new Set())?.id).toBe(1);
    cat.markStatus(1, 3);
    expect(selectChannel(cat.snapshot, 'default', 'm', new Set())?.id).toBe(2);
    cat.markStatus(1, 1);
    expect(selectChannel(cat.snapshot, 'default', 'm', new Set())?.id).toBe(1);
  });
});

describe('upstream failure rules', () => {
  it('maps status codes but never a success', () => {
    expect(mapStatus(429, { '429': '500' })).toBe(500);
    expect(mapStatus(200, { '200': '500' })).toBe(200);
    expect(mapStatus(400, { '400': 'x' })).toBe(400);
  });

  it('retries on 429, 5xx and auth errors but not on 400, 408, 504, 524', () => {
    for (const s of [0, 401, 403, 429, 500, 502, 503]) expect(isRetryable(s)).toBe(true);
    for (const s of [200, 400, 408, 504, 524]) expect(isRetryable(s)).toBe(false);
  });

  it('disables on 401, credit errors and admin keywords only', () => {
    const e = (over: object) => ({ status: 500, message: 'boom', type: 'server_error', code: null, ...over });
    expect(disableReason(e({ status: 401 }), 1, '')).toMatch(/401/);
    expect(disableReason(e({ status: 403 }), 1, '')).toBeNull();
    expect(disableReason(e({ status: 403 }), 24, '')).toMatch(/403/);
    expect(disableReason(e({ code: 'invalid_api_key' }), 1, '')).toMatch(/invalid_api_key/);
    expect(disableReason(e({ type: 'insufficient_quota' }), 1, '')).toMatch(/insufficient_quota/);
    expect(
      disableReason(e({ message: 'Your CREDIT balance is too low' }), 1, 'x\nYour credit balance is too low'),
    ).toMatch(/keyword/);
    expect(disableReason(e({}), 1, 'nothing')).toBeNull();
  });

  it('never echoes an upstream credential error to the client', () => {
    const msg = clientMessage({
      status: 401,
      message: 'Incorrect API key provided: sk-ab***cd',
      type: 'x',
      code: null,
    });
    expect(msg).not.toMatch(/sk-/);
  });
});

describe('keys and token checks', () => {
  const url = new URL('http://x/v1/models?key=q');
  it('reads the key from every accepted header, Bearer first', () => {
    expect(extractKey(new Headers({ authorization: 'Bearer sk-a' }), url)).toBe('sk-a');
    expect(extractKey(new Headers({ 'x-api-key': 'b' }), new URL('http://x/'))).toBe('b');
    expect(extractKey(new Headers({ 'x-goog-api-key': 'c' }), new URL('http://x/'))).toBe('c');
    expect(extractKey(new Headers(), url)).toBe('q');
    expect(
      extractKey(
        new Headers({ authorization: 'midjourney-proxy', 'mj-api-secret': 'd' }),
        new URL('http://x/'),
      ),
    ).toBe('d');
    expect(extractKey(new Headers(), new URL('http://x/'))).toBeNull();
  });

  it('splits an admin channel pin off the key', () => {
    expect(parseKey('sk-abc')).toEqual({ key: 'abc', channelId: null });
    expect(parseKey('abc-12')).toEqual({ key: 'abc', channelId: 12 });
  });

  it('matches IP allow-lists by address and CIDR, v4 and v6', () => {
    expect(ipAllowed('', '1.2.3.4')).toBe(true);
    expect(ipAllowed('10.0.0.0/8\n192.168.1.5', '10.9.8.7')).toBe(true);
    expect(ipAllowed('10.0.0.0/8\n192.168.1.5', '::ffff:192.168.1.5')).toBe(true);
    expect(ipAllowed('10.0.0.0/8', '11.0.0.1')).toBe(false);
    expect(ipAllowed('2001:db8::/32', '2001:db8::1')).toBe(true);
    expect(ipAllowed('10.0.0.0/8', '')).toBe(false);
  });

  const token = tokenRecord;
  const user = userRecord;
  const opts = { usableGroups: { default: '', vip: '' }, groupRatio: { default: 1, vip: 2 } };
  const ctx = { ip: '1.1.1.1', now: 1_000_000, pinnedChannelId: null, model: 'm' };
  const refuse = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e as RelayError;
    }
    throw new Error('expected a refusal');
  };

  it('passes a good token and uses its group over the user group', () => {
    expect(checkToken({ token: token({ group: 'vip' }), user: user() }, ctx, opts).group).toBe('vip');
    expect(checkToken({ token: token(), user: user() }, ctx, opts).group).toBe('default');
  });

  it('refuses each failing check with its own status and code', () => {
    const cases: [Partial<TokenRecord>, Partial<UserRecord>, object, number, string][] = [
      [{ status: 2 }, {}, {}, 401, 'token_disabled'],
      [{ status: 3 }, {}, {}, 401, 'token_expired'],
      [{ expiredTime: 999 }, {}, {}, 401, 'token_expired'],
      [{ remainQuota: 0 }, {}, {}, 401, 'token_exhausted'],
      [{}, { status: 2 }, {}, 403, 'user_banned'],
      [{ allowIps: '10.0.0.0/8' }, {}, {}, 403, 'ip_not_allowed'],
      [{ modelLimitsEnabled: true, modelLimits: ['x'] }, {}, {}, 403, 'model_not_allowed'],
      [{}, {}, { pinnedChannelId: 3 }, 403, 'channel_pin_forbidden'],
      [{ group: 'svip' }, {}, {}, 403, 'group_not_usable'],
    ];
    for (const [t, u, c, status, code] of cases) {
      const err = refuse(() => checkToken({ token: token(t), user: user(u) }, { ...ctx, ...c }, opts));
      expect([err.status, err.code]).toEqual([status, code]);
    }
    // Unlimited tokens pass with no remaining quota; admins may pin a channel.
    expect(
      checkToken({ token: token({ remainQuota: 0, unlimitedQuota: true }), user: user() }, ctx, opts).token
        ?.id,
    ).toBe(1);
    expect(
      checkToken({ token: token(), user: user({ role: 10 }) }, { ...ctx, pinnedChannelId: 3 }, opts)
        .pinnedChannelId,
    ).toBe(3);
  });
});
