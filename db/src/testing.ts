import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmConfig } from './config.ts';
import { migrateUp } from './migrate.ts';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

export type TestDatabase = {
  orm: MikroORM;
  url: string;
  name: string;
  /** Closes `orm` and drops the database. */
  drop(): Promise<void>;
};

export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

/** A Redis key prefix unique to this vitest worker. */
export function testRedisPrefix(): string {
  return `sy_test_${workerId()}:`;
}

/**
 * The vitest worker, prefixed by TEST_NAMESPACE when set, so that several test runs on one machine (engineers
 * working side by side) use disjoint databases and Redis keys.
 */
export function workerId(): string {
  const ns = process.env.TEST_NAMESPACE?.replace(/[^a-z0-9]/gi, '').toLowerCase();
  return `${ns ? `${ns}_` : ''}${process.env.VITEST_POOL_ID ?? String(process.pid)}`;
}

/** `url` with its database name replaced. */
export function databaseUrlFor(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function assertIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid database name: ${name}`);
  return name;
}

/** Runs SQL on the server of `url` (database-level statements such as CREATE DATABASE). */
async function adminExecute(url: string, statements: string[]): Promise<void> {
  const orm = await MikroORM.init({ ...createOrmConfig(url, { poolMax: 2 }), pool: { min: 0, max: 1 } });
  try {
    for (const sql of statements) await orm.em.getConnection().execute(sql);
  } finally {
    await orm.close(true);
  }
}

export async function recreateDatabase(serverUrl: string, name: string): Promise<string> {
  const db = assertIdentifier(name);
  await adminExecute(serverUrl, [`drop database if exists "${db}" with (force)`, `create database "${db}"`]);
  return databaseUrlFor(serverUrl, db);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await adminExecute(serverUrl, [`drop database if exists "${assertIdentifier(name)}" with (force)`]);
}

/** Creates a fresh database `name` on the server of `serverUrl`, runs `fn` with its URL, drops it after. */
export async function withDatabase<T>(
  serverUrl: string,
  name: string,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const url = await recreateDatabase(serverUrl, name);
  try {
    return await fn(url);
  } finally {
    await dropDatabase(serverUrl, name);
  }
}

/**
 * (Re)creates `sy_test_<VITEST_POOL_ID or pid>[_suffix]` on TEST_DATABASE_URL and applies the real migrations.
 * Pass a suffix when one worker needs more than one database at a time.
 */
export async function createTestDatabase(
  opts: { suffix?: string; poolMax?: number } = {},
): Promise<TestDatabase> {
  const serverUrl = testDatabaseUrl();
  const name = assertIdentifier(`sy_test_${workerId()}${opts.suffix ? `_${opts.suffix}` : ''}`.toLowerCase());
  const url = await recreateDatabase(serverUrl, name);
  const orm = await MikroORM.init(
    createOrmConfig(url, { poolMax: opts.poolMax ?? 5, allowGlobalContext: true }),
  );
  await migrateUp(orm);
  return {
    orm,
    url,
    name,
    async drop() {
      await orm.close(true);
      await dropDatabase(serverUrl, name);
    },
  };
}
