import { Migration } from '@mikro-orm/migrations';

/** users.quota_warned: one quota-warning notification per crossing of the warning threshold (ADR 022). */
export class Migration20261125180000_quota_warned extends Migration {
  override name = 'Migration20261125180000_quota_warned';

  override up(): void | Promise<void> {
    this.addSql(`alter table "users" add column "quota_warned" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "users" drop column "quota_warned";`);
  }
}
