import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { Version } from '@switchyard/db/entities/version.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  createVersion,
  deleteVersion,
  getVersion,
  latestVersions,
  listVersions,
  parseInput,
  updateVersion,
  type VersionFormInput,
  type VersionsCtx,
  versionFormSchema,
  versionUpdateSchema,
} from './versions.server.ts';

let db: TestDatabase;
let t: VersionsCtx['t'];
let tzh: VersionsCtx['t'];
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'versions' });
  t = await i18next.getFixedT(new Request('http://x/', { headers: { 'Accept-Language': 'en' } }), 'common');
  tzh = await i18next.getFixedT(
    new Request('http://x/', { headers: { 'Accept-Language': 'zh-CN' } }),
    'common',
  );
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table audit_entries, versions, sessions, users restart identity cascade');
});

async function makeUser(role: number): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `v${seq}`,
    displayName: '',
    affCode: `vaff${seq}`,
    role,
  } as never);
  await em.flush();
  return user;
}

function ctxFor(actor: User | null, tr = t): VersionsCtx {
  return {
    em: db.orm.em.fork(),
    actor: actor
      ? {
          id: actor.id,
          username: actor.username,
          displayName: actor.displayName,
          role: actor.role,
          group: actor.group,
        }
      : null,
    t: tr,
    ip: '127.0.0.1',
  };
}

const base = {
  Version: '1.0.0',
  DownUrl: 'https://example.com/app-1.0.0.exe',
  FileMd5: '',
  ForceIds: '',
  Force: 0,
  OsType: 1,
  Remark: '',
};

const create = (ctx: VersionsCtx, over: Partial<VersionFormInput> = {}) =>
  createVersion(ctx, parseInput(ctx, versionFormSchema, { ...base, ...over }));

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (error) {
    return error as InputError;
  }
  throw new Error('expected a refusal');
}

describe('validation (seed 001 §5 "Version form")', () => {
  it('uses the seed messages for empty and malformed fields', async () => {
    const admin = await makeUser(Role.Admin);
    const ctx = ctxFor(admin);
    let e = await refusal(create(ctx, { Version: '  ' }));
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe('Please fill in download address and version number');
    expect(e.fieldErrors.Version).toEqual(['The version cannot be empty']);
    e = await refusal(create(ctx, { DownUrl: '' }));
    expect(e.message).toBe('Please fill in download address and version number');
    expect(e.fieldErrors.DownUrl).toEqual(['Enter a valid URL']);
    for (const url of [
      'ftp://example.com/a',
      'example.com/a',
      'javascript:alert(1)',
      'http://',
      'https:// x',
    ]) {
      e = await refusal(create(ctx, { DownUrl: url }));
      expect(e.message, url).toBe('Enter a valid URL');
    }
    for (const md5 of ['abc', 'g'.repeat(32), 'a'.repeat(33), '0123456789abcdef0123456789abcde ']) {
      e = await refusal(create(ctx, { FileMd5: md5.trimEnd() === md5 ? md5 : `${md5}x` }));
      expect(e.message, md5).toBe('Enter a valid MD5');
    }
    e = await refusal(create(ctx, { OsType: 4 }));
    expect(e.message).toBe('Choose an operating system');
    e = await refusal(create(ctx, { OsType: '' }));
    expect(e.message).toBe('Choose an operating system');
    e = await refusal(create(ctx, { Force: 2 }));
    expect(e.message).toBe('Forced update must be yes or no');
    e = await refusal(create(ctx, { ForceIds: '1.0.0,,1.1.0' }));
    expect(e.fieldErrors.ForceIds).toHaveLength(1);
    e = await refusal(create(ctx, { ForceIds: ' , ' }));
    expect(e.fieldErrors.ForceIds).toHaveLength(1);
    expect(await db.orm.em.fork().count(Version, {})).toBe(0);

    const zh = await refusal(create(ctxFor(admin, tzh), { Version: '', DownUrl: '' }));
    expect(zh.message).toBe('请填写下载地址和版本号');
    expect(zh.fieldErrors.Version).toEqual(['版本号不能为空']);
  });

  it('accepts http and https, an MD5 in any case (stored lower-case), and trims ForceIds', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const a = await create(ctx, {
      DownUrl: 'http://dl.example.com/a.dmg',
      FileMd5: '0123456789ABCDEFabcdef0123456789',
      ForceIds: ' 0.9.0 , 0.9.1 ',
      Force: '1',
      OsType: '2',
    });
    expect(a).toMatchObject({
      os_type: 2,
      version: '1.0.0',
      downurl: 'http://dl.example.com/a.dmg',
      filemd5: '0123456789abcdefabcdef0123456789',
      forceids: '0.9.0,0.9.1',
      force: 1,
    });
    expect(typeof a.last_date).toBe('string');
    const b = await create(ctx, { Version: '1.0.1', FileMd5: 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF' });
    expect(b.filemd5).toBe('f'.repeat(32));
  });

  it('refuses a duplicate (OsType, Version), on create and update; the same version on another OS is fine', async () => {
    const ctx = ctxFor(await makeUser(Role.Admin));
    const win = await create(ctx, { Version: '2.0.0', OsType: 1 });
    await create(ctx, { Version: '2.0.0', OsType: 3 });
    const e = await refusal(create(ctx, { Version: '2.0.0', OsType: 1 }));
    expect(e.message).toBe('This version already exists for this operating system');
    const other = await create(ctx, { Version: '2.0.1', OsType: 1 });
    const u = await refusal(
      updateVersion(
        ctx,
        parseInput(ctx, versionUpdateSchema, { ...base, Version: '2.0.0', OsType: 1, Id: other.id }),
      ),
    );
    expect(u.message).toBe('This version already exists for this operating system');
    // updating a row with its own (OsType, Version) is not a clash
    const same = await updateVersion(
      ctx,
      parseInput(ctx, versionUpdateSchema, { ...base, Version: '2.0.0', OsType: 1, Remark: 'x', Id: win.id }),
    );
    expect(same.remark).toBe('x');
    // concurrent creates of one pair: exactly one wins
    const results = await Promise.allSettled(
      [1, 2, 3].map(() => create(ctxFor(ctx.actor as never), { Version: '9.9.9', OsType: 2 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('use cases', () => {
  it('creates, lists newest first (paged or whole), gets, updates, deletes, each audited', async () => {
    const admin = await makeUser(Role.Admin);
    const ctx = ctxFor(admin);
    const a = await create(ctx, { Version: '1.0.0', Remark: '<p>first</p>' });
    const b = await create(ctx, { Version: '1.1.0' });
    const c = await create(ctx, { Version: '1.0.0', OsType: 2 });

    const all = await listVersions(ctxFor(admin));
    expect(all.list.map((v) => v.id)).toEqual([c.id, b.id, a.id]);
    expect(all).toMatchObject({ page: 1, total: 3, page_size: 3 });
    expect(Object.keys(all.list[0] ?? {}).sort()).toEqual(
      ['downurl', 'filemd5', 'force', 'forceids', 'id', 'last_date', 'os_type', 'remark', 'version'].sort(),
    );
    const page2 = await listVersions(ctxFor(admin), { page: 2, pageSize: 2 });
    expect(page2).toMatchObject({ page: 2, total: 3, page_size: 2 });
    expect(page2.list.map((v) => v.id)).toEqual([a.id]);

    expect(await getVersion(ctxFor(admin), a.id)).toMatchObject({ id: a.id, remark: '<p>first</p>' });
    await expect(getVersion(ctxFor(admin), 9999)).rejects.toThrow(NotFoundError);

    const before = (await db.orm.em.fork().findOneOrFail(Version, a.id)).lastDate;
    await new Promise((r) => setTimeout(r, 15));
    const updated = await updateVersion(
      ctxFor(admin),
      parseInput(ctx, versionUpdateSchema, { ...base, Id: String(a.id), Version: '1.0.2', Force: 1 }),
    );
    expect(updated).toMatchObject({ id: a.id, version: '1.0.2', force: 1 });
    expect(new Date(updated.last_date).getTime()).toBeGreaterThan(new Date(before).getTime());
    // the edited row is now the newest
    expect((await listVersions(ctxFor(admin))).list[0]?.id).toBe(a.id);
    await expect(
      updateVersion(ctxFor(admin), parseInput(ctx, versionUpdateSchema, { ...base, Id: 9999 })),
    ).rejects.toThrow(NotFoundError);

    await deleteVersion(ctxFor(admin), b.id);
    await expect(deleteVersion(ctxFor(admin), b.id)).rejects.toThrow(NotFoundError);
    expect(await db.orm.em.fork().count(Version, {})).toBe(2);

    const audits = await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } });
    expect(audits.map((x) => x.action)).toEqual([
      'version.create',
      'version.create',
      'version.create',
      'version.update',
      'version.delete',
    ]);
    expect(
      audits.every((x) => x.actorId === admin.id && x.targetType === 'version' && x.ip === '127.0.0.1'),
    ).toBe(true);
    expect(JSON.parse(audits[3]?.before ?? '{}')).toMatchObject({ version: '1.0.0' });
    expect(JSON.parse(audits[3]?.after ?? '{}')).toMatchObject({ version: '1.0.2', force: 1 });
    expect(JSON.parse(audits[4]?.before ?? '{}')).toMatchObject({ version: '1.1.0' });
    expect(audits[4]?.after).toBeNull();
  });

  it('refuses every admin call to an ordinary user (403) and to nobody (401), writing nothing', async () => {
    const admin = await makeUser(Role.Admin);
    const existing = await create(ctxFor(admin));
    const user = await makeUser(Role.User);
    const input = parseInput(ctxFor(user), versionFormSchema, { ...base, Version: '5.0.0' });
    const update = parseInput(ctxFor(user), versionUpdateSchema, { ...base, Id: existing.id });
    for (const [who, err] of [
      [user, ForbiddenError],
      [null, UnauthorizedError],
    ] as const) {
      await expect(listVersions(ctxFor(who))).rejects.toThrow(err);
      await expect(getVersion(ctxFor(who), existing.id)).rejects.toThrow(err);
      await expect(createVersion(ctxFor(who), input)).rejects.toThrow(err);
      await expect(updateVersion(ctxFor(who), update)).rejects.toThrow(err);
      await expect(deleteVersion(ctxFor(who), existing.id)).rejects.toThrow(err);
    }
    expect(await db.orm.em.fork().count(Version, {})).toBe(1);
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(1);
  });

  it('latestVersions: the newest row of each OS (by last_date, then id), null when none', async () => {
    expect((await latestVersions({ em: db.orm.em.fork() })).map((l) => l.version)).toEqual([
      null,
      null,
      null,
    ]);
    const ctx = ctxFor(await makeUser(Role.Admin));
    await create(ctx, { Version: '1.0.0', OsType: 1 });
    const win2 = await create(ctx, { Version: '1.1.0', OsType: 1 });
    const mac = await create(ctx, { Version: '3.0.0', OsType: 3 });
    const old = await create(ctx, { Version: '0.1.0', OsType: 3 });
    // an older release date wins over a higher id
    await db.orm.em
      .fork()
      .getConnection()
      .execute(`update versions set last_date = now() - interval '1 day' where id = ${old.id}`);
    const latest = await latestVersions({ em: db.orm.em.fork() });
    expect(latest.map((l) => [l.os_type, l.version?.id ?? null])).toEqual([
      [1, win2.id],
      [2, null],
      [3, mac.id],
    ]);
  });
});
