import { Migration } from '@mikro-orm/migrations';

export class Migration20261123081942 extends Migration {
  override name = 'Migration20261123081942';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "verification_codes" ("id" bigserial primary key, "email" varchar(255) not null, "purpose" varchar(16) not null, "code_hash" varchar(64) not null, "expires_at" timestamptz not null, "consumed_at" timestamptz null, "attempts" int not null default 0, "ip" varchar(64) not null default '', "created_at" timestamptz not null default now());`,
    );
    this.addSql(`create index "verification_codes_created_at_index" on "verification_codes" ("created_at");`);
    this.addSql(
      `create index "verification_codes_email_purpose_index" on "verification_codes" ("email", "purpose");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "verification_codes" cascade;`);
  }
}
