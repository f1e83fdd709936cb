import { Migration } from '@mikro-orm/migrations';

export class Migration20261125164424_relay_outbox extends Migration {
  override name = 'Migration20261125164424_relay_outbox';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "relay_outbox" ("id" varchar(32) not null, "request_id" varchar(64) not null, "user_id" int not null, "token_id" int null, "amount" bigint not null, "payload" text not null, "created_at" bigint not null, primary key ("id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "relay_outbox" cascade;`);
  }
}
