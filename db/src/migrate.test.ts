import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrmConfig } from './config.ts';
import { User } from './entities/user.ts';
import { migrateUp } from './migrate.ts';
import {
  createTestDatabase,
  dropDatabase,
  recreateDatabase,
  type TestDatabase,
  testDatabaseUrl,
  workerId,
} from './testing.ts';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('apply on an empty database and leave no diff against the entities', async () => {
    expect(await db.orm.migrator.getPending()).toEqual([]);
    expect(await db.orm.migrator.getExecuted()).toHaveLength(
      db.orm.config.get('migrations').migrationsList!.length,
    );
    const diff = await db.orm.schema.getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim()).toBe('');
    expect(await db.orm.migrator.checkSchema()).toBe(false);
  });

  it('creates the expected tables and maps bigint quota columns to numbers', async () => {
    const em = db.orm.em.fork();
    const user = em.create(User, { username: 'big', affCode: 'big-aff', quota: 2 ** 52 + 1 });
    await em.flush();
    const again = await db.orm.em.fork().findOneOrFail(User, { id: user.id });
    expect(again.quota).toBe(2 ** 52 + 1);
    expect(typeof again.usedQuota).toBe('number');
    expect(again.group).toBe('default');
    const rows = await em
      .getConnection()
      .execute<{ column_name: string }[]>(
        `select column_name from information_schema.columns where table_name = 'tokens' order by column_name`,
      );
    expect(rows.map((r) => r.column_name)).toEqual(
      expect.arrayContaining([
        'remain_quota',
        'unlimited_quota',
        'expired_time',
        'model_limits_enabled',
        'allow_ips',
      ]),
    );
  });

  it('serializes concurrent runs with an advisory lock', async () => {
    const server = testDatabaseUrl();
    const name = `sy_test_${workerId()}_concurrent`;
    const url = await recreateDatabase(server, name);
    const a = await MikroORM.init(createOrmConfig(url, { poolMax: 3 }));
    const b = await MikroORM.init(createOrmConfig(url, { poolMax: 3 }));
    try {
      const [ra, rb] = await Promise.all([migrateUp(a), migrateUp(b)]);
      expect([...ra, ...rb]).toHaveLength(a.config.get('migrations').migrationsList!.length);
      expect(await a.migrator.getPending()).toEqual([]);
    } finally {
      await a.close(true);
      await b.close(true);
      await dropDatabase(server, name);
    }
  });
});
