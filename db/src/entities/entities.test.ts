import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing.ts';
import {
  Ability,
  Log,
  LogType,
  QuotaData,
  Session,
  TOKEN_NEVER_EXPIRES,
  Token,
  TokenStatus,
  User,
} from './index.ts';

describe('entities', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ suffix: 'entities' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('stores sessions keyed by token hash and loads their user', async () => {
    const em = db.orm.em.fork();
    const user = em.create(User, { username: 'alice', affCode: 'alice01' });
    await em.flush();
    em.create(Session, {
      id: 'a'.repeat(64),
      user,
      expiresAt: new Date(Date.now() + 60_000),
      ip: '127.0.0.1',
    });
    await em.flush();
    const session = await db.orm.em
      .fork()
      .findOneOrFail(Session, { id: 'a'.repeat(64) }, { populate: ['user'] });
    expect(session.user.username).toBe('alice');
    expect(session.lastSeenAt).toBeInstanceOf(Date);
  });

  it('gives tokens the seeds defaults', async () => {
    const em = db.orm.em.fork();
    const user = await em.findOneOrFail(User, { username: 'alice' });
    const token = em.create(Token, { userId: user.id, key: 'k'.repeat(48), name: 'default' });
    await em.flush();
    const row = await db.orm.em.fork().findOneOrFail(Token, { id: token.id });
    expect(row).toMatchObject({
      status: TokenStatus.Enabled,
      expiredTime: TOKEN_NEVER_EXPIRES,
      unlimitedQuota: false,
      remainQuota: 0,
      modelLimitsEnabled: false,
    });
    expect(row.createdTime).toBeGreaterThan(1_700_000_000);
  });

  it('rejects a second log with the same request id (idempotent billing)', async () => {
    const em = db.orm.em.fork();
    em.create(Log, { type: LogType.Consume, userId: 1, quota: 10, requestId: 'req-1' });
    await em.flush();
    const em2 = db.orm.em.fork();
    em2.create(Log, { type: LogType.Consume, userId: 1, quota: 10, requestId: 'req-1' });
    await expect(em2.flush()).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    const em3 = db.orm.em.fork();
    em3.create(Log, { type: LogType.System, content: 'no request id' });
    em3.create(Log, { type: LogType.System, content: 'no request id either' });
    await em3.flush();
  });

  it('keys abilities by (group, model, channel) and quota data by (user, model, hour)', async () => {
    const em = db.orm.em.fork();
    em.create(Ability, { group: 'default', model: 'gpt-4o', channelId: 1, priority: 10, weight: 5 });
    em.create(Ability, { group: 'default', model: 'gpt-4o', channelId: 2 });
    em.create(QuotaData, {
      userId: 1,
      modelName: 'gpt-4o',
      createdAt: 3600,
      count: 1,
      quota: 5,
      tokenUsed: 7,
    });
    await em.flush();
    const found = await db.orm.em
      .fork()
      .find(Ability, { group: 'default', model: 'gpt-4o', enabled: true }, { orderBy: { priority: 'desc' } });
    expect(found.map((a) => a.channelId)).toEqual([1, 2]);
    const dup = db.orm.em.fork();
    dup.create(QuotaData, { userId: 1, modelName: 'gpt-4o', createdAt: 3600 });
    await expect(dup.flush()).rejects.toBeInstanceOf(UniqueConstraintViolationException);
  });

  it('lets one account hold a bound e-mail or third-party id, while unbound (empty) values repeat', async () => {
    const em = db.orm.em.fork();
    em.create(User, { username: 'gh1', affCode: 'gh1aff', githubId: '4242', email: 'a@example.com' });
    em.create(User, { username: 'gh2', affCode: 'gh2aff' });
    em.create(User, { username: 'gh3', affCode: 'gh3aff' });
    await em.flush();
    for (const [field, value] of [
      ['githubId', '4242'],
      ['email', 'a@example.com'],
    ] as const) {
      const other = db.orm.em.fork();
      other.create(User, { username: `dup-${field}`, affCode: `dup${field}`, [field]: value });
      await expect(other.flush()).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    }
  });
});
