import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';

/** Key of the PostgreSQL advisory lock that serializes migration runs across processes. */
export const MIGRATION_LOCK_KEY = 0x5_77a1_0001;

/**
 * Applies pending migrations. A session-level advisory lock on a dedicated connection makes two processes
 * that start together run one after the other; the second then finds nothing pending.
 * Returns the names of the migrations applied by this call.
 */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  return withAdvisoryLock(orm, MIGRATION_LOCK_KEY, async () => {
    const applied = await orm.migrator.up();
    return applied.map((m) => m.name);
  });
}

/**
 * Runs `fn` while holding a session advisory lock on its own pooled connection (so the pool needs at least
 * two connections: createOrmConfig never makes it smaller).
 */
export async function withAdvisoryLock<T>(orm: MikroORM, key: number, fn: () => Promise<T>): Promise<T> {
  const pool = await (orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [key]);
    try {
      return await fn();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [key]);
    }
  } finally {
    client.release();
  }
}
