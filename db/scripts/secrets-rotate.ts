/**
 * Re-encrypts every stored secret (channel keys, secret options, token keys with their lookup hash, webhook
 * secrets) under SECRETS_KEY (ADR 019, ADR 035).
 *
 *   DATABASE_URL=postgres://... SECRETS_KEY=<new> [SECRETS_KEY_PREVIOUS=<old>[,<older>]] npm run secrets:rotate [-- --dry-run]
 *
 * - first encryption: SECRETS_KEY only (plaintext rows are sealed);
 * - rotation: SECRETS_KEY = the new key, SECRETS_KEY_PREVIOUS = the old one(s);
 * - turning encryption off: SECRETS_KEY unset, SECRETS_KEY_PREVIOUS = the old key (values are written back plain).
 * One transaction per table; idempotent (rows already under SECRETS_KEY are left alone). `--dry-run` only counts.
 * With `npm start`'s embedded database: DATABASE_URL=postgres://postgres:switchyard@127.0.0.1:15432/switchyard.
 */
import { initOrm } from '../src/orm.ts';
import { rotateSecrets } from '../src/security/rotate.ts';
import { createSecretBox, SecretsError } from '../src/security/secrets.ts';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('DATABASE_URL is required');
  process.exit(2);
}
const dryRun = process.argv.includes('--dry-run');
let box: Awaited<ReturnType<typeof createSecretBox>>;
try {
  box = await createSecretBox({ key: process.env.SECRETS_KEY, previous: process.env.SECRETS_KEY_PREVIOUS });
} catch (err) {
  console.error(err instanceof SecretsError ? err.message : err);
  process.exit(2);
}
if (!box.enabled && box.keyIds.length === 0) {
  console.error(
    'Set SECRETS_KEY (the key to encrypt with) and/or SECRETS_KEY_PREVIOUS (the keys to decrypt with)',
  );
  process.exit(2);
}
const orm = await initOrm(databaseUrl, { poolMax: 2 });
try {
  const target = box.enabled ? `key ${box.keyId}` : 'plaintext';
  console.log(`${dryRun ? 'Dry run: would bring' : 'Bringing'} every secret to ${target}.`);
  for (const c of await rotateSecrets(orm, box, { dryRun })) {
    const sealed = Object.entries(c.sealed).map(([kid, n]) => `${n} under key ${kid}`);
    const before = [`${c.plaintext} plaintext`, ...sealed].join(', ');
    console.log(
      `${c.table}.${c.column}: ${c.total} secrets (${before}); ${c.changed} ${dryRun ? 'to change' : 'changed'}`,
    );
  }
} catch (err) {
  console.error(
    err instanceof SecretsError
      ? `Stopped: ${err.message}. Tables reported above are done; the others are unchanged.`
      : err,
  );
  process.exitCode = 1;
} finally {
  await orm.close();
}
