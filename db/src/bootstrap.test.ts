import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapRoot, isDefaultRootPassword } from './bootstrap.ts';
import { createOrmConfig } from './config.ts';
import { Role, User, UserStatus } from './entities/user.ts';
import { verifyPassword } from './security/password.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

describe('bootstrapRoot', () => {
  let db: TestDatabase;
  let other: MikroORM;
  beforeAll(async () => {
    db = await createTestDatabase({ suffix: 'bootstrap' });
    other = await MikroORM.init(createOrmConfig(db.url, { poolMax: 3 }));
  });
  afterAll(async () => {
    await other?.close(true);
    await db?.drop();
  });

  it('creates the root account exactly once, even when two processes race', async () => {
    const results = await Promise.all([bootstrapRoot(db.orm), bootstrapRoot(other), bootstrapRoot(db.orm)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await bootstrapRoot(other)).toBeNull();

    const users = await db.orm.em.fork().find(User, {});
    expect(users).toHaveLength(1);
    const root = users[0]!;
    expect(root).toMatchObject({
      username: 'root',
      displayName: 'Root User',
      role: Role.Root,
      status: UserStatus.Enabled,
      group: 'default',
      quota: 100_000_000,
      inviterId: 0,
    });
    expect(root.affCode).toMatch(/^\w{8}$/);
    expect(root.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword('123456', root.passwordHash)).toBe(true);
    expect(await isDefaultRootPassword(root)).toBe(true);
  });

  it('never serializes the password hash or the access token', async () => {
    const em = db.orm.em.fork();
    const root = await em.findOneOrFail(User, { username: 'root' });
    root.accessToken = 'secret-access-token';
    await em.flush();
    const json = JSON.stringify(root);
    expect(json).not.toContain('argon2');
    expect(json).not.toContain('secret-access-token');
    expect(json).toContain('"displayName":"Root User"');
  });

  it('isDefaultRootPassword is false for other users and changed passwords', async () => {
    expect(await isDefaultRootPassword({ username: 'alice', passwordHash: '' })).toBe(false);
    expect(await isDefaultRootPassword({ username: 'root', passwordHash: 'not-a-hash' })).toBe(false);
  });
});
