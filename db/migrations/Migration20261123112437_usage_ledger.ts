import { Migration } from '@mikro-orm/migrations';

export class Migration20261123112437_usage_ledger extends Migration {
  override name = 'Migration20261123112437_usage_ledger';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "usage_ledger" ("request_id" varchar(64) not null, "user_id" int not null, "token_id" int not null default 0, "quota" bigint not null default '0', "kind" smallint not null, "created_at" bigint not null, primary key ("request_id"));`,
    );
    this.addSql(`create index "usage_ledger_created_at_index" on "usage_ledger" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "usage_ledger" cascade;`);
  }
}
