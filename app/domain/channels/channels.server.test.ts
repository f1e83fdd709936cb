import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createSecretBox, PLAINTEXT_BOX, type SecretBox } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { ForbiddenError, InputError, NotFoundError } from '#app/domain/errors.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  type ChannelsCtx,
  channelFormInput,
  copyChannel,
  createChannelSchema,
  createChannels,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fixAbilities,
  getChannel,
  listChannelModels,
  listChannels,
  parseInput,
  setChannelStatus,
  setChannelsTag,
  setTagStatus,
  tagEditSchema,
  updateChannel,
  updateChannelSchema,
} from './channels.server.ts';
import { groupChannelEntries } from './entries.ts';

let db: TestDatabase;
let t: ChannelsCtx['t'];
let seq = 0;
let invalidations: unknown[] = [];
let secrets: SecretBox = PLAINTEXT_BOX;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'channels' });
  t = await i18next.getFixedT('en', 'common');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  invalidations = [];
  await db.orm.em
    .getConnection()
    .execute('truncate table abilities, channels, audit_entries, sessions, users restart identity cascade');
});

const relay = {
  invalidateAccounts: async (change: unknown) => {
    invalidations.push(change);
  },
} as unknown as ChannelsCtx['relay'];

async function makeUser(role: number): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `ch${seq}`,
    displayName: '',
    affCode: `chaff${seq}`,
    role,
  } as never);
  await em.flush();
  return user;
}

function ctxFor(actor: User): ChannelsCtx {
  return {
    em: db.orm.em.fork(),
    actor: {
      id: actor.id,
      username: actor.username,
      displayName: actor.displayName,
      role: actor.role,
      group: actor.group,
    },
    t,
    relay,
    options: { get: ((key: string) => (key === 'ModelRatio' ? { 'priced-model': 1 } : null)) as never },
    secrets,
    ip: '127.0.0.1',
  };
}

const create = (ctx: ChannelsCtx, body: Record<string, unknown>) =>
  createChannels(ctx, parseInput(ctx, createChannelSchema, body));
const update = (ctx: ChannelsCtx, body: Record<string, unknown>) =>
  updateChannel(ctx, parseInput(ctx, updateChannelSchema, body));

async function abilitiesOf(channelId?: number) {
  const rows = await db.orm.em.fork().find(Ability, channelId ? { channelId } : {}, {
    orderBy: { channelId: 'asc', group: 'asc', model: 'asc' },
  });
  return rows.map((a) => [a.channelId, a.group, a.model, a.enabled, Number(a.priority), a.weight, a.tag]);
}
const channelRow = (id: number) => db.orm.em.fork().findOneOrFail(Channel, { id });

describe('channels domain', () => {
  it('creates a channel with its abilities (group × model), defaults and an audit entry without the key', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [id] = await create(ctx, {
      name: 'one',
      key: 'sk-secret-abc',
      models: ['gpt-4o', 'gpt-4o-mini', 'gpt-4o'],
      groups: ['default', 'vip'],
      base_url: 'https://up.example.com///',
      priority: '5',
      weight: '3',
      tag: 'T',
      auto_ban: false,
    });
    const c = await channelRow(id!);
    expect([c.type, c.models, c.group, c.baseUrl, c.autoBan, c.status]).toEqual([
      1,
      'gpt-4o,gpt-4o-mini',
      'default,vip',
      'https://up.example.com',
      0,
      1,
    ]);
    expect(await abilitiesOf(id)).toEqual([
      [id, 'default', 'gpt-4o', true, 5, 3, 'T'],
      [id, 'default', 'gpt-4o-mini', true, 5, 3, 'T'],
      [id, 'vip', 'gpt-4o', true, 5, 3, 'T'],
      [id, 'vip', 'gpt-4o-mini', true, 5, 3, 'T'],
    ]);
    const audits = await db.orm.em.fork().find(AuditEntry, { action: 'channel.create' });
    expect(audits).toHaveLength(1);
    expect(audits[0]!.after).not.toContain('sk-secret-abc');
    expect(JSON.parse(audits[0]!.after!)).toMatchObject({ name: 'one', key_count: 1 });
    expect(invalidations).toEqual([{ channels: true }]);
    // defaults (seed §9): group default, priority 0, weight 0, auto_ban 1
    const [id2] = await create(ctx, { name: 'two', key: 'k2', models: 'a' });
    const c2 = await channelRow(id2!);
    expect([c2.group, Number(c2.priority), c2.weight, c2.autoBan]).toEqual(['default', 0, 0, 1]);
    // the key is only in getChannel; the list leaves it out
    expect((await getChannel(ctx, id!)).key).toBe('sk-secret-abc');
    const list = await listChannels(ctx, { page: 1, pageSize: 10 });
    expect(JSON.stringify(list)).not.toContain('sk-secret-abc');
  });

  it('batch-creates one channel per key line', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const ids = await create(ctx, { mode: 'batch', name: 'b', key: 'k1\n\n k2 \nk3', models: 'm1,m2' });
    expect(ids).toHaveLength(3);
    const rows = await db.orm.em.fork().find(Channel, {}, { orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.key)).toEqual(['k1', 'k2', 'k3']);
    expect(await db.orm.em.fork().count(Ability, {})).toBe(6);
    const audits = await db.orm.em.fork().find(AuditEntry, { action: 'channel.create' });
    expect(audits).toHaveLength(3);
    for (const a of audits) for (const k of ['k1', 'k2', 'k3']) expect(a.after).not.toContain(`"${k}"`);
  });

  it('validates with the seed messages and applies type defaults', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    await expect(create(ctx, { name: '', key: 'k', models: 'a' })).rejects.toThrow(
      'Please fill in the channel name and key!',
    );
    await expect(create(ctx, { name: 'n', key: '', models: 'a' })).rejects.toThrow(InputError);
    await expect(create(ctx, { name: 'n', key: 'k', models: '' })).rejects.toThrow(
      'Please select at least one model!',
    );
    await expect(create(ctx, { name: 'n', key: 'k', models: 'a', model_mapping: '{bad' })).rejects.toThrow(
      'model mapping must be a valid JSON format!',
    );
    await expect(
      create(ctx, { name: 'n', key: 'k', models: 'a', status_code_mapping: '[1]' }),
    ).rejects.toThrow('status code mapping must be a valid JSON format!');
    await expect(create(ctx, { name: 'n', key: 'k', models: 'a', setting: 'x' })).rejects.toThrow(
      'setting must be a valid JSON format!',
    );
    await expect(
      create(ctx, { name: 'n', key: 'k', models: 'a', type: 41, other: '{"default":' }),
    ).rejects.toThrow('The region must be a valid JSON format!');
    await expect(create(ctx, { name: 'n', key: 'k', models: 'a', type: 9999 })).rejects.toThrow(
      'Unsupported channel type',
    );
    expect(await db.orm.em.fork().count(Channel, {})).toBe(0);
    const [x] = await create(ctx, { name: 'x', key: 'a|b|c', models: 'spark', type: 18 });
    expect((await channelRow(x!)).other).toBe('v2.1');
    const [v] = await create(ctx, {
      name: 'v',
      key: '{}',
      models: 'gemini',
      type: 41,
      other: '{"default":"us-central1"}',
      model_mapping: '{"a":"b"}',
      weight: -4,
    });
    expect((await channelRow(v!)).weight).toBe(0);
  });

  it('updates fields and status, rebuilding abilities; a blank key keeps the old one', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [id] = await create(ctx, { name: 'u', key: 'old-key', models: 'a,b', group: 'default' });
    invalidations = [];
    await update(ctx, { id, key: '', models: ['c'], groups: ['g1', 'g2'], priority: -3, weight: -1 });
    const c = await channelRow(id!);
    expect([c.key, c.models, c.group, Number(c.priority), c.weight]).toEqual([
      'old-key',
      'c',
      'g1,g2',
      -3,
      0,
    ]);
    expect(await abilitiesOf(id)).toEqual([
      [id, 'g1', 'c', true, -3, 0, null],
      [id, 'g2', 'c', true, -3, 0, null],
    ]);
    await expect(update(ctx, { id, model_mapping: 'nope' })).rejects.toThrow(
      'model mapping must be a valid JSON format!',
    );
    await setChannelStatus(ctx, id!, 2);
    expect((await abilitiesOf(id)).map((a) => a[3])).toEqual([false, false]);
    expect((await db.orm.em.fork().find(AuditEntry, { action: 'channel.disable' })).length).toBe(1);
    // auto-disabled with a reason; enabling clears the reason
    await db.orm.em
      .fork()
      .nativeUpdate(Channel, { id }, { status: 3, otherInfo: '{"status_reason":"401","status_time":1}' });
    await setChannelStatus(ctx, id!, 1);
    expect((await channelRow(id!)).otherInfo).toBe('');
    expect((await abilitiesOf(id)).map((a) => a[3])).toEqual([true, true]);
    expect(invalidations.length).toBe(3);
    await expect(update(ctx, { id: 9999, name: 'x' })).rejects.toThrow(NotFoundError);
  });

  it('tags: batch tag, tag edit, tag enable/disable update channels and abilities', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [a] = await create(ctx, { name: 'a', key: 'k', models: 'm1' });
    const [b] = await create(ctx, { name: 'b', key: 'k', models: 'm1' });
    const [c] = await create(ctx, { name: 'c', key: 'k', models: 'm1', tag: 'other' });
    await expect(setChannelsTag(ctx, [], 'x')).rejects.toThrow('Please select channels first!');
    await expect(setChannelsTag(ctx, [a!], ' ')).rejects.toThrow('The tag cannot be empty!');
    expect(await setChannelsTag(ctx, [a!, b!], 'team')).toBe(2);
    const grouped = await listChannels(ctx, { page: 1, pageSize: 10, tagMode: true, idSort: true });
    expect(grouped.total).toBe(2);
    // flat channel objects, each tag's channels together (new-api's GetAllChannels with tag_mode)
    expect(grouped.items.map((ch) => [ch.tag, ch.id])).toEqual([
      ['other', c],
      ['team', b],
      ['team', a],
    ]);
    expect(
      groupChannelEntries(grouped.items, true).map((i) =>
        i.kind === 'tag' ? [i.tag, i.children.map((ch) => ch.id)] : i.channel.id,
      ),
    ).toEqual([
      ['other', [c]],
      ['team', [b, a]],
    ]);
    expect((await abilitiesOf(a)).map((r) => r[6])).toEqual(['team']);

    const tagEdit = (body: Record<string, unknown>) => editTag(ctx, parseInput(ctx, tagEditSchema, body));
    await expect(tagEdit({ tag: 'team', new_tag: 'team', models: '', priority: '' })).rejects.toThrow(
      'No modifications!',
    );
    await expect(tagEdit({ tag: 'team', model_mapping: '{x' })).rejects.toThrow(
      'model mapping must be a valid JSON format!',
    );
    expect(await tagEdit({ tag: 'team', models: 'm2,m3', groups: ['vip'], priority: 7, weight: 2 })).toBe(2);
    expect(await abilitiesOf(b)).toEqual([
      [b, 'vip', 'm2', true, 7, 2, 'team'],
      [b, 'vip', 'm3', true, 7, 2, 'team'],
    ]);
    expect(await setTagStatus(ctx, 'team', 2)).toBe(2);
    expect((await abilitiesOf()).filter((r) => r[6] === 'team').every((r) => r[3] === false)).toBe(true);
    expect((await channelRow(c!)).status).toBe(1);
    expect(await setTagStatus(ctx, 'team', 1)).toBe(2);
    expect((await channelRow(a!)).status).toBe(1);
    // rename, then dissolve
    expect(await tagEdit({ tag: 'team', new_tag: 'crew' })).toBe(2);
    expect((await channelRow(a!)).tag).toBe('crew');
    expect(await tagEdit({ tag: 'crew', new_tag: '' })).toBe(2);
    expect((await channelRow(a!)).tag).toBeNull();
    expect((await abilitiesOf(a)).map((r) => r[6])).toEqual([null, null]);
    await expect(setTagStatus(ctx, 'nobody', 1)).rejects.toThrow(NotFoundError);

    // tag mode groups tagged channels into one entry
    const page = await listChannels(ctx, { page: 1, pageSize: 10, tagMode: true, idSort: true });
    expect(page.items.map((ch) => ch.id)).toEqual([c, b, a]);
    expect(
      groupChannelEntries(page.items, true).map((i) =>
        i.kind === 'tag' ? `tag:${i.tag}:${i.children.length}` : i.channel.id,
      ),
    ).toEqual(['tag:other:1', b, a]);
  });

  it('searches by keyword, group and model; sorts by id', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [a] = await create(ctx, { name: 'alpha', key: 'k', models: 'gpt-4o', group: 'vip', priority: 1 });
    const [b] = await create(ctx, { name: 'beta', key: 'k', models: 'claude-3', group: 'default,vip2' });
    const ids = async (q: Parameters<typeof listChannels>[1]) =>
      (await listChannels(ctx, q)).items.map((ch) => ch.id);
    expect(await ids({ page: 1, pageSize: 10 })).toEqual([a, b]);
    expect(await ids({ page: 1, pageSize: 10, idSort: true })).toEqual([b, a]);
    expect(await ids({ page: 1, pageSize: 10, keyword: 'bet' })).toEqual([b]);
    expect(await ids({ page: 1, pageSize: 10, keyword: String(a) })).toEqual([a]);
    expect(await ids({ page: 1, pageSize: 10, group: 'vip' })).toEqual([a]);
    expect(await ids({ page: 1, pageSize: 10, model: 'claude' })).toEqual([b]);
    expect(await ids({ page: 2, pageSize: 1, idSort: true })).toEqual([a]);
    expect(await ids({ page: 2, pageSize: 1 })).toEqual([b]);
    expect(await listChannelModels(ctx)).toEqual(['claude-3', 'gpt-4o', 'priced-model']);
  });

  it('deletes one, a batch and all disabled, removing abilities; fix rebuilds everything', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [a] = await create(ctx, { name: 'a', key: 'k', models: 'm' });
    const [b] = await create(ctx, { name: 'b', key: 'k', models: 'm' });
    const [c] = await create(ctx, { name: 'c', key: 'k', models: 'm', status: 3 });
    const [d] = await create(ctx, { name: 'd', key: 'k', models: 'm,n' });
    expect((await abilitiesOf(c)).map((r) => r[3])).toEqual([false]);
    await deleteChannel(ctx, a!);
    expect(await abilitiesOf(a)).toEqual([]);
    await expect(deleteChannel(ctx, a!)).rejects.toThrow(NotFoundError);
    await setChannelStatus(ctx, b!, 2);
    expect(await deleteDisabledChannels(ctx)).toBe(2);
    expect(await db.orm.em.fork().count(Channel, {})).toBe(1);
    // break the routing table, then fix it
    await db.orm.em.fork().nativeDelete(Ability, {});
    await db.orm.em
      .getConnection()
      .execute(
        `insert into abilities ("group", model, channel_id, enabled, priority, weight) values ('x','y',999,true,0,0)`,
      );
    expect(await fixAbilities(ctx)).toEqual({ success: 1, fails: 0 });
    expect(await abilitiesOf()).toEqual([
      [d, 'default', 'm', true, 0, 0, null],
      [d, 'default', 'n', true, 0, 0, null],
    ]);
    expect(await deleteChannels(ctx, [d!, 12345])).toBe(1);
    expect(await db.orm.em.fork().count(Ability, {})).toBe(0);
    const deletes = await db.orm.em.fork().find(AuditEntry, { action: 'channel.delete' });
    expect(deletes).toHaveLength(4);
    for (const e of deletes) expect(e.before).not.toContain('"key":');
  });

  it('copies a channel (key included, abilities built) and reads the no-JS form fields', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const [id] = await create(ctx, { name: 'src', key: 'sk-copy', models: 'm1,m2', group: 'vip', tag: 'x' });
    const copy = await copyChannel(ctx, id!);
    const c = await channelRow(copy);
    expect([c.name, c.key, c.models, c.group, c.tag]).toEqual(['src_copy', 'sk-copy', 'm1,m2', 'vip', 'x']);
    expect((await abilitiesOf(copy)).length).toBe(2);
    const audit = await db.orm.em.fork().findOneOrFail(AuditEntry, { action: 'channel.copy' });
    expect(audit.after).not.toContain('sk-copy');

    const form = new FormData();
    for (const [k, v] of [
      ['name', 'f'],
      ['key', 'k'],
      ['models', 'a, b'],
      ['models_pick', 'c'],
      ['models_pick', 'a'],
      ['groups_present', '1'],
      ['groups', 'default'],
      ['groups', 'vip'],
      ['auto_ban', '0'],
      ['auto_ban', '1'],
    ])
      form.append(k!, v!);
    expect(channelFormInput(form)).toMatchObject({
      name: 'f',
      models: ['a', 'b', 'c'],
      groups: ['default', 'vip'],
      auto_ban: '1',
    });
    const unchecked = new FormData();
    unchecked.append('auto_ban', '0');
    unchecked.append('groups_present', '1');
    expect(channelFormInput(unchecked)).toMatchObject({ auto_ban: '0', groups: [], models: [] });
  });

  it('with SECRETS_KEY seals keys for their row on create, batch create, update and copy', async () => {
    secrets = await createSecretBox({ key: 'ab'.repeat(32) });
    try {
      const admin = await makeUser(Role.Admin);
      const ctx = ctxFor(admin);
      const [id] = await create(ctx, { name: 'enc', key: 'sk-one\nsk-two', models: 'm' });
      const batch = await create(ctx, { name: 'b', key: 'sk-b1\nsk-b2', models: 'm', mode: 'batch' });
      expect(batch).toHaveLength(2);
      await update(ctx, { id, key: 'sk-three' });
      const copy = await copyChannel(ctx, id!);
      const rows = await Promise.all([id!, ...batch, copy].map((x) => channelRow(x)));
      for (const row of rows) {
        expect(row.key).toMatch(/^enc:v1:/);
        expect(row.key).not.toContain('sk-');
      }
      expect(rows[0]?.key).not.toBe(rows[3]?.key);
      expect((await getChannel(ctx, copy)).key).toBe('sk-three');
      expect((await getChannel(ctx, batch[1]!)).key).toBe('sk-b2');
      const audits = await db.orm.em
        .fork()
        .find(AuditEntry, { targetId: String(id) }, { orderBy: { id: 'asc' } });
      expect(audits.map((a) => JSON.parse(a.after ?? '{}').key_count)).toEqual([2, 1]);
      // A key that no longer opens (here: moved from another row) reads as an error, and can be replaced.
      await db.orm.em.fork().nativeUpdate(Channel, { id: copy }, { key: rows[1]?.key });
      const fresh = ctxFor(admin);
      await expect(getChannel(fresh, copy)).rejects.toThrow(
        `The stored key of channel #${copy} cannot be decrypted (another SECRETS_KEY, or the row was altered): enter the key again`,
      );
      await update(fresh, { id: copy, key: 'sk-fixed' });
      expect((await getChannel(ctxFor(admin), copy)).key).toBe('sk-fixed');
    } finally {
      secrets = PLAINTEXT_BOX;
    }
  });

  it('refuses ordinary users everywhere', async () => {
    const admin = ctxFor(await makeUser(Role.Admin));
    const [id] = await create(admin, { name: 'a', key: 'k', models: 'm', tag: 't' });
    const ctx = ctxFor(await makeUser(Role.User));
    const calls: (() => Promise<unknown>)[] = [
      () => listChannels(ctx, { page: 1, pageSize: 10 }),
      () => getChannel(ctx, id!),
      () => create(ctx, { name: 'x', key: 'k', models: 'm' }),
      () => update(ctx, { id, name: 'x' }),
      () => deleteChannel(ctx, id!),
      () => deleteChannels(ctx, [id!]),
      () => deleteDisabledChannels(ctx),
      () => setChannelsTag(ctx, [id!], 'x'),
      () => setTagStatus(ctx, 't', 2),
      () => editTag(ctx, { tag: 't', new_tag: 'u' } as never),
      () => fixAbilities(ctx),
      () => listChannelModels(ctx),
      () => copyChannel(ctx, id!),
    ];
    for (const call of calls) await expect(call()).rejects.toThrow(ForbiddenError);
    expect((await channelRow(id!)).name).toBe('a');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The JSON routes: 403 for users on every call, the envelope for admins.

import { action as indexAction, loader as indexLoader } from '#app/routes/api.channel._index.ts';
import { action as byIdAction, loader as byIdLoader } from '#app/routes/api.channel.$id.ts';
import { action as batchAction } from '#app/routes/api.channel.batch._index.ts';
import { action as batchTagAction } from '#app/routes/api.channel.batch.tag.ts';
import { action as disabledAction } from '#app/routes/api.channel.disabled.ts';
import { action as fixAction } from '#app/routes/api.channel.fix.ts';
import { loader as modelsLoader } from '#app/routes/api.channel.models.ts';
import { loader as searchLoader } from '#app/routes/api.channel.search.ts';
import { action as tagAction } from '#app/routes/api.channel.tag._index.ts';
import { action as tagDisabledAction } from '#app/routes/api.channel.tag.disabled.ts';
import { action as tagEnabledAction } from '#app/routes/api.channel.tag.enabled.ts';

function context() {
  return {
    services: {
      orm: db.orm,
      options: { get: () => null },
      secrets,
      relay: null,
      version: 'test',
      startedAt: 0,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    },
  } as never;
}

async function session(user: User): Promise<string> {
  const em = db.orm.em.fork();
  const token = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(token),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  return token;
}

function apiRequest(user: User, token: string, path: string, method = 'GET', body?: unknown) {
  const headers = new Headers({
    'Accept-Language': 'en',
    Cookie: `sy_session=${token}`,
    'New-Api-User': String(user.id),
  });
  if (body !== undefined) headers.set('Content-Type', 'application/json');
  return new Request(`http://localhost${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

type Fn = (args: never) => Promise<Response> | Response;
const run = (fn: Fn, request: Request, params: Record<string, string> = {}) =>
  fn({ request, context: context(), params } as never) as Promise<Response>;

describe('channel JSON routes', () => {
  it('answers 403 to a user on every call and works for an admin', async () => {
    const admin = await makeUser(Role.Admin);
    const adminToken = await session(admin);
    const user = await makeUser(Role.User);
    const userToken = await session(user);
    const routes: [Fn, string, string, unknown?, Record<string, string>?][] = [
      [indexLoader, '/api/channel/?p=1', 'GET'],
      [indexAction, '/api/channel/', 'POST', { name: 'n', key: 'k', models: 'm' }],
      [indexAction, '/api/channel/', 'PUT', { id: 1, name: 'x' }],
      [byIdLoader, '/api/channel/1', 'GET', undefined, { id: '1' }],
      [byIdAction, '/api/channel/1/', 'DELETE', undefined, { id: '1' }],
      [searchLoader, '/api/channel/search?keyword=n', 'GET'],
      [tagAction, '/api/channel/tag', 'PUT', { tag: 't', new_tag: 'u' }],
      [tagEnabledAction, '/api/channel/tag/enabled', 'POST', { tag: 't' }],
      [tagDisabledAction, '/api/channel/tag/disabled', 'POST', { tag: 't' }],
      [batchAction, '/api/channel/batch', 'POST', { ids: [1] }],
      [batchTagAction, '/api/channel/batch/tag', 'POST', { ids: [1], tag: 't' }],
      [disabledAction, '/api/channel/disabled', 'DELETE'],
      [fixAction, '/api/channel/fix', 'POST'],
      [modelsLoader, '/api/channel/models', 'GET'],
    ];
    for (const [fn, path, method, body, params] of routes) {
      const res = await run(fn, apiRequest(user, userToken, path, method, body), params);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(((await res.json()) as { success: boolean }).success).toBe(false);
    }
    expect(await db.orm.em.fork().count(Channel, {})).toBe(0);

    const created = await run(
      indexAction,
      apiRequest(admin, adminToken, '/api/channel/', 'POST', {
        name: 'n',
        key: 'sk-x',
        models: 'm',
        model_mapping: '{',
      }),
    );
    expect(await created.json()).toMatchObject({
      success: false,
      message: 'model mapping must be a valid JSON format!',
    });
    const ok = await run(
      indexAction,
      apiRequest(admin, adminToken, '/api/channel/', 'POST', {
        name: 'n',
        key: 'sk-x',
        models: 'm',
        groups: ['default'],
      }),
    );
    const { data: ids } = (await ok.json()) as { data: number[] };
    expect(ids).toHaveLength(1);
    const list = (await (
      await run(indexLoader, apiRequest(admin, adminToken, '/api/channel/?p=1'))
    ).json()) as {
      data: { total: number; items: Record<string, unknown>[] };
    };
    // new-api's GetAllChannels: data {items, total, page, page_size}, items flat channel objects (ADR 025)
    expect(list.data).toMatchObject({ total: 1, page: 1, page_size: 10 });
    expect(list.data.items[0]).toMatchObject({
      id: ids[0],
      name: 'n',
      models: 'm',
      group: 'default',
      status: 1,
    });
    for (const v of Object.values(list.data.items[0]!))
      expect(v === null || typeof v !== 'object').toBe(true);
    expect(JSON.stringify(list)).not.toContain('sk-x');
    const fixed = await run(fixAction, apiRequest(admin, adminToken, '/api/channel/fix', 'POST'));
    // new-api's contract (seed 001 §7): data is the count of channels fixed.
    expect(await fixed.json()).toEqual({ success: true, message: '1 channels fixed, 0 failed', data: 1 });
    const del = await run(byIdAction, apiRequest(admin, adminToken, `/api/channel/${ids[0]}/`, 'DELETE'), {
      id: String(ids[0]),
    });
    expect(await del.json()).toMatchObject({ success: true });
    expect(await db.orm.em.fork().count(Ability, {})).toBe(0);
  });

  it('list and search answer flat channel objects in tag mode too (no tag wrapper rows)', async () => {
    const admin = await makeUser(Role.Admin);
    const adminToken = await session(admin);
    const make = async (body: Record<string, unknown>) =>
      (
        (await (
          await run(indexAction, apiRequest(admin, adminToken, '/api/channel/', 'POST', body))
        ).json()) as {
          data: number[];
        }
      ).data[0]!;
    const a = await make({ name: 'flat-a', key: 'k', models: 'm', groups: ['default'], tag: 'crew' });
    const b = await make({ name: 'flat-b', key: 'k', models: 'm', groups: ['default'], tag: 'crew' });
    const c = await make({ name: 'flat-c', key: 'k', models: 'm', groups: ['default'] });
    for (const path of [
      '/api/channel/?p=1&page_size=10&tag_mode=true&id_sort=true',
      '/api/channel/search?keyword=flat&tag_mode=true&id_sort=true',
    ]) {
      const loader = path.startsWith('/api/channel/search') ? searchLoader : indexLoader;
      const { data } = (await (await run(loader, apiRequest(admin, adminToken, path))).json()) as {
        data: { total: number; items: Record<string, unknown>[] };
      };
      // two entries (the tag crew, the untagged channel), three channel objects
      expect(data.total).toBe(2);
      expect(data.items.map((i) => [i.id, i.tag])).toEqual([
        [c, ''],
        [b, 'crew'],
        [a, 'crew'],
      ]);
      for (const item of data.items) {
        expect(item).not.toHaveProperty('kind');
        for (const v of Object.values(item)) expect(v === null || typeof v !== 'object').toBe(true);
      }
    }
  });
});
