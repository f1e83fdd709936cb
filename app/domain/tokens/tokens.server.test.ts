import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InputError, NotFoundError } from '#app/domain/errors.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  createTokenSchema,
  createTokens,
  deleteToken,
  getToken,
  listTokens,
  parseInput,
  searchTokens,
  setTokenStatus,
  type TokensCtx,
  updateToken,
  updateTokenSchema,
} from './tokens.server.ts';

let db: TestDatabase;
let t: TokensCtx['t'];
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'tokens' });
  t = await i18next.getFixedT('en', 'common');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table tokens, audit_entries, sessions, users restart identity cascade');
});

const optionValues: Record<string, unknown> = { UserUsableGroups: { default: 'Default', vip: 'VIP' } };
const options = { get: ((key: string) => optionValues[key]) as TokensCtx['options']['get'] };

async function makeUser(): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, { username: `t${seq}`, affCode: `taff${seq}` } as never);
  await em.flush();
  return user;
}

function ctxFor(user: User, opts = options): TokensCtx {
  return {
    em: db.orm.em.fork(),
    actor: { id: user.id, username: user.username, displayName: '', role: user.role, group: user.group },
    t,
    options: opts,
    secrets: PLAINTEXT_BOX,
    ip: '127.0.0.1',
  };
}

const create = async (ctx: TokensCtx, input: Record<string, unknown>) =>
  createTokens(ctx, parseInput(ctx, createTokenSchema, input));
const update = async (ctx: TokensCtx, input: Record<string, unknown>) =>
  updateToken(ctx, parseInput(ctx, updateTokenSchema, input));

describe('tokens domain', () => {
  it('creates a token with a 48-character alphanumeric key and the default quota', async () => {
    const a = await makeUser();
    const [tok] = await create(ctxFor(a), { name: 'first' });
    expect(tok?.key).toMatch(/^[0-9a-zA-Z]{48}$/);
    expect(tok?.remain_quota).toBe(500000);
    expect(tok?.expired_time).toBe(-1);
    expect(tok?.status).toBe(1);
    expect(tok?.user_id).toBe(a.id);
    const audits = await db.orm.em.fork().find(AuditEntry, { action: 'token.create' });
    expect(audits).toHaveLength(1);
    expect(`${audits[0]?.before}${audits[0]?.after}`).not.toContain(tok!.key);
  });

  it('names the extra tokens of a batch NAME-xxxxxx and refuses bad counts', async () => {
    const a = await makeUser();
    const ctx = ctxFor(a);
    const made = await create(ctx, { name: 'batch', count: 3 });
    expect(made.map((x) => x.name)[0]).toBe('batch');
    for (const x of made.slice(1)) expect(x.name).toMatch(/^batch-[0-9a-zA-Z]{6}$/);
    expect(new Set(made.map((x) => x.key)).size).toBe(3);
    await expect(create(ctx, { name: 'x', count: 0 })).rejects.toThrow('positive integer');
    await expect(create(ctx, { name: 'x', count: 'abc' })).rejects.toBeInstanceOf(InputError);
    await expect(create(ctx, { name: 'x', count: 101 })).rejects.toThrow('At most 100');
    await expect(create(ctx, { name: '' })).rejects.toThrow('Please enter a token name');
  });

  it('validates the IP allow-list and the group', async () => {
    const a = await makeUser();
    const ctx = ctxFor(a);
    const [ok] = await create(ctx, {
      name: 'ips',
      allow_ips: '10.0.0.1\n 192.168.0.0/16 \n\n::1\n2001:db8::/32',
    });
    expect(ok?.allow_ips).toBe('10.0.0.1\n192.168.0.0/16\n::1\n2001:db8::/32');
    await expect(create(ctx, { name: 'x', allow_ips: '10.0.0.300' })).rejects.toThrow('10.0.0.300');
    await expect(create(ctx, { name: 'x', allow_ips: '10.0.0.0/33' })).rejects.toThrow('Invalid IP');
    await expect(create(ctx, { name: 'x', allow_ips: 'example.com' })).rejects.toThrow('Invalid IP');
    const [vip] = await create(ctx, { name: 'g', group: 'vip' });
    expect(vip?.group).toBe('vip');
    await expect(create(ctx, { name: 'x', group: 'svip' })).rejects.toThrow('Group svip is not available');
    await expect(
      create(ctxFor(a, { get: (() => ({})) as TokensCtx['options']['get'] }), { name: 'x', group: 'vip' }),
    ).rejects.toThrow('not available');
  });

  it('offers UserUsableGroups plus the own group, and nothing when none are configured', async () => {
    const { usableGroups } = await import('./tokens.server.ts');
    const a = await makeUser();
    expect(Object.keys(usableGroups(ctxFor(a)))).toEqual(['default', 'vip']);
    const none = { get: (() => ({})) as TokensCtx['options']['get'] };
    expect(usableGroups(ctxFor(a, none))).toEqual({});
  });

  it('refuses a bad expiry and accepts a date text', async () => {
    const a = await makeUser();
    const ctx = ctxFor(a);
    await expect(create(ctx, { name: 'x', expired_time: 'not a date' })).rejects.toThrow(
      'Expiry time format error!',
    );
    const [tok] = await create(ctx, { name: 'x', expired_time: '2099-01-02T03:04:00Z' });
    expect(tok?.expired_time).toBe(Date.UTC(2099, 0, 2, 3, 4) / 1000);
  });

  it('keeps every user to their own tokens (another id is NotFound)', async () => {
    const a = await makeUser();
    const b = await makeUser();
    const [ta] = await create(ctxFor(a), { name: 'mine' });
    const id = ta!.id;
    await expect(getToken(ctxFor(b), id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(update(ctxFor(b), { id, name: 'stolen' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(setTokenStatus(ctxFor(b), { id, status: 2 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteToken(ctxFor(b), id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await listTokens(ctxFor(b), { page: 1, size: 10 })).total).toBe(0);
    expect((await searchTokens(ctxFor(b), { keyword: 'mine', token: '', page: 1, size: 10 })).total).toBe(0);
    const still = await db.orm.em.fork().findOneOrFail(Token, { id });
    expect(still.name).toBe('mine');
    expect(still.status).toBe(1);
    expect(still.deletedAt).toBeNull();
  });

  it('lists newest first (p=0 is page 1) and searches by name and key prefix with or without sk-', async () => {
    const a = await makeUser();
    const ctx = ctxFor(a);
    await create(ctx, { name: 'alpha' });
    const [beta] = await create(ctx, { name: 'beta' });
    const list = await listTokens(ctx, { page: 0, size: 100 });
    expect(list.page).toBe(1);
    expect(list.items.map((x) => x.name)).toEqual(['beta', 'alpha']);
    const byName = await searchTokens(ctx, { keyword: 'lph', token: '', page: 1, size: 10 });
    expect(byName.items.map((x) => x.name)).toEqual(['alpha']);
    for (const token of [
      beta!.key,
      `sk-${beta!.key}`,
      beta!.key.slice(0, 10),
      `sk-${beta!.key.slice(0, 8)}`,
    ]) {
      const r = await searchTokens(ctx, { keyword: '', token, page: 1, size: 10 });
      expect(r.items.map((x) => x.name)).toEqual(['beta']);
    }
  });

  it('shows expired (3) and exhausted (4) tokens, and refuses to enable them until fixed', async () => {
    const a = await makeUser();
    const ctx = ctxFor(a);
    const [old] = await create(ctx, { name: 'old', expired_time: 1000 });
    const [empty] = await create(ctx, { name: 'empty', remain_quota: 0 });
    expect(old?.status).toBe(3);
    expect(empty?.status).toBe(4);
    // an enabled token that runs out is shown as exhausted on the next list
    const [live] = await create(ctx, { name: 'live' });
    await db.orm.em.fork().nativeUpdate(Token, { id: live!.id }, { remainQuota: 0 });
    const listed = await listTokens(ctxFor(a), { page: 1, size: 10 });
    expect(listed.items.find((x) => x.id === live!.id)?.status).toBe(4);

    await expect(setTokenStatus(ctxFor(a), { id: old!.id, status: 1 })).rejects.toThrow('has expired');
    await expect(setTokenStatus(ctxFor(a), { id: empty!.id, status: 1 })).rejects.toThrow('quota is used up');
    // disabling is always allowed
    expect((await setTokenStatus(ctxFor(a), { id: old!.id, status: 2 })).status).toBe(2);
    // editing the expiry / quota lifts the refusal
    const fixed = await update(ctxFor(a), { id: empty!.id, name: 'empty', remain_quota: 100 });
    expect(fixed.status).toBe(1);
    await update(ctxFor(a), { id: old!.id, name: 'old', expired_time: -1 });
    expect((await setTokenStatus(ctxFor(a), { id: old!.id, status: 1 })).status).toBe(1);
    // a full update switching to status 1 with a past expiry is refused too; an echoed status is no change
    await setTokenStatus(ctxFor(a), { id: old!.id, status: 2 });
    await expect(update(ctxFor(a), { id: old!.id, name: 'old', expired_time: 5, status: 1 })).rejects.toThrow(
      'has expired',
    );
    const echoed = await update(ctxFor(a), { id: empty!.id, name: 'empty', remain_quota: 0, status: 1 });
    expect(echoed.status).toBe(4);
  });

  it('updates, disables and deletes with audit entries that never hold the key', async () => {
    const a = await makeUser();
    const [tok] = await create(ctxFor(a), { name: 'edit me' });
    const id = tok!.id;
    const edited = await update(ctxFor(a), {
      id,
      name: 'edited',
      remain_quota: '5000000',
      unlimited_quota: 'on',
      model_limits_enabled: true,
      model_limits: 'gpt-4o, gpt-4o-mini,gpt-4o',
    });
    expect(edited).toMatchObject({ name: 'edited', remain_quota: 5000000, unlimited_quota: true });
    expect(edited.model_limits).toBe('gpt-4o,gpt-4o-mini');
    expect(edited.key).toBe(tok!.key);
    expect((await setTokenStatus(ctxFor(a), { id, status: 2 })).status).toBe(2);
    await deleteToken(ctxFor(a), id);
    await expect(getToken(ctxFor(a), id)).rejects.toBeInstanceOf(NotFoundError);
    const audits = await db.orm.em
      .fork()
      .find(AuditEntry, { targetType: 'token' }, { orderBy: { id: 'asc' } });
    expect(audits.map((x) => x.action)).toEqual([
      'token.create',
      'token.update',
      'token.status',
      'token.delete',
    ]);
    for (const entry of audits) expect(`${entry.before}${entry.after}`).not.toContain(tok!.key);
  });
});
