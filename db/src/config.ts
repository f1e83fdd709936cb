import { Migrator } from '@mikro-orm/migrations';
import type { Options } from '@mikro-orm/postgresql';
import { defineConfig } from '@mikro-orm/postgresql';
import { migrationsList } from '../migrations/index.ts';
import { entities } from './entities/index.ts';

export type OrmConfigOptions = {
  /** Maximum connections of the pg pool (default 10, at least 2: advisory locks hold one). */
  poolMax?: number;
  /** Minimum idle connections kept in the pool (default 0). */
  poolMin?: number;
  /** Log SQL statements. */
  debug?: boolean;
  /** Allow the global EntityManager (tests and scripts only). */
  allowGlobalContext?: boolean;
};

/** Table holding the names of executed migrations. */
export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** Absolute path of db/migrations (used only by the migration generator). */
export const MIGRATIONS_PATH = new URL('../migrations', import.meta.url).pathname;

/**
 * The MikroORM configuration of every process: entities and migrations are listed explicitly, the schema
 * diff is taken against the live database (no snapshot files).
 */
export function createOrmConfig(databaseUrl: string, opts: OrmConfigOptions = {}): Options {
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    pool: { min: opts.poolMin ?? 0, max: Math.max(2, opts.poolMax ?? 10) },
    debug: opts.debug ?? false,
    allowGlobalContext: opts.allowGlobalContext ?? false,
    forceUtcTimezone: true,
    migrations: {
      tableName: MIGRATIONS_TABLE,
      migrationsList,
      path: MIGRATIONS_PATH,
      emit: 'ts',
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
  });
}
