/**
 * Applies pending migrations (under an advisory lock) and bootstraps the root account.
 *   DATABASE_URL=postgres://... npm run db:migrate
 */
import { bootstrapRoot } from '../src/bootstrap.ts';
import { migrateUp } from '../src/migrate.ts';
import { initOrm } from '../src/orm.ts';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('DATABASE_URL is required');
  process.exit(2);
}
const orm = await initOrm(databaseUrl, { poolMax: 2 });
try {
  const applied = await migrateUp(orm);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
  if (!process.argv.includes('--no-bootstrap')) {
    const created = await bootstrapRoot(orm);
    if (created)
      console.log('Created the root account (username root, password 123456): change the password.');
  }
} finally {
  await orm.close();
}
