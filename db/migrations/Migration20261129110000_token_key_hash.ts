import { Migration } from '@mikro-orm/migrations';

/**
 * Sealed token keys (ADR 035): `tokens.key` widens to hold the AES-GCM form (`enc:v1:<key id>:...`, about 120
 * characters for a 48-character key), and `key_hash` holds the keyed lookup hash the relay finds a sealed token
 * by. Nothing is backfilled here (a migration has no SECRETS_KEY): rows stay plaintext with a null hash and are
 * still found by their key, until `npm run secrets:rotate` seals them. `down` needs plaintext keys again (run the
 * rotation without SECRETS_KEY first), or the column cannot shrink back.
 */
export class Migration20261129110000_token_key_hash extends Migration {
  override name = 'Migration20261129110000_token_key_hash';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "tokens" alter column "key" type varchar(255), add column "key_hash" varchar(64) null;`,
    );
    this.addSql(`alter table "tokens" add constraint "tokens_key_hash_unique" unique ("key_hash");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "tokens" drop constraint "tokens_key_hash_unique";`);
    this.addSql(`alter table "tokens" drop column "key_hash", alter column "key" type varchar(64);`);
  }
}
