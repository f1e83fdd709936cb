import { Migration } from '@mikro-orm/migrations';

/**
 * users.access_token holds the SHA-256 (hex) of the system access token from now on (ADR 019): the tokens issued
 * before keep working because their hash is what authentication now compares. Not reversible: `down` clears the
 * column (users generate a new token).
 */
export class Migration20261125165000_access_token_hash extends Migration {
  override name = 'Migration20261125165000_access_token_hash';

  override up(): void | Promise<void> {
    this.addSql(`update "users" set "access_token" = null where "access_token" = '';`);
    this.addSql(
      `update "users" set "access_token" = encode(sha256(convert_to("access_token", 'UTF8')), 'hex') where "access_token" is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`update "users" set "access_token" = null;`);
  }
}
