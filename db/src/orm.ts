import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmConfig, type OrmConfigOptions } from './config.ts';

export type { OrmConfigOptions } from './config.ts';

/** Connects to PostgreSQL. Request code must fork: `orm.em.fork()`. */
export async function initOrm(databaseUrl: string, opts: OrmConfigOptions = {}): Promise<MikroORM> {
  return MikroORM.init(createOrmConfig(databaseUrl, opts));
}
