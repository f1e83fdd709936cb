export {
  bootstrapRoot,
  DEFAULT_ROOT_PASSWORD,
  generateAffCode,
  isDefaultRootPassword,
  ROOT_USERNAME,
} from './bootstrap.ts';
export { createOrmConfig, MIGRATIONS_PATH, MIGRATIONS_TABLE, type OrmConfigOptions } from './config.ts';
export * from './entities/index.ts';
export { MIGRATION_LOCK_KEY, migrateUp, withAdvisoryLock } from './migrate.ts';
export * from './options/registry.ts';
export {
  OPTIONS_CHANNEL,
  type OptionChangeListener,
  type OptionEntry,
  OptionService,
  type OptionServiceDeps,
} from './options/service.ts';
export { initOrm } from './orm.ts';
export {
  createMemoryPubSub,
  createPgPubSub,
  createRedisPubSub,
  type PubSub,
  type PubSubHandler,
} from './pubsub.ts';
export { hashPassword, needsRehash, verifyPassword } from './security/password.ts';
