import { channelKeySlot, createSecretBox } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConsoleConfig } from './config.ts';
import { startConsole } from './console.ts';

/** The console refuses to start when stored secrets are sealed under a key it does not have (ADR 019). */
describe('console start with encrypted secrets', () => {
  let db: TestDatabase;
  const key = 'ef'.repeat(32);
  beforeAll(async () => {
    db = await createTestDatabase({ suffix: 'console_secrets' });
    const box = await createSecretBox({ key });
    const conn = db.orm.em.getConnection();
    const [row] = (await conn.execute(
      `insert into channels (type, name, key, models, "group") values (1, 'a', '', 'm', 'default') returning id`,
    )) as { id: number }[];
    await conn.execute('update channels set key = ? where id = ?', [
      await box.seal('sk-stored', channelKeySlot(Number(row?.id))),
      row?.id,
    ]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const config = (env: Record<string, string>) =>
    loadConsoleConfig({
      DATABASE_URL: db.url,
      MIGRATE_ON_START: 'false',
      CONSOLE_GRPC_PORT: '0',
      INTERNAL_API_SECRET: 'console-secrets-internal-secret-0123456789',
      ...env,
    });

  it('stops with a message naming the key ids when SECRETS_KEY is missing or another one', async () => {
    await expect(startConsole(config({}))).rejects.toThrow(
      /encrypted secrets cannot be read \(1 in channels\.key under key [0-9a-f]{8}; SECRETS_KEY is not set\)/,
    );
    await expect(startConsole(config({ SECRETS_KEY: 'aa'.repeat(32) }))).rejects.toThrow(
      /configured key ids: [0-9a-f]{8}/,
    );
  });
});
