import { Migration } from '@mikro-orm/migrations';

export class Migration20261125192641_notification_outbox extends Migration {
  override name = 'Migration20261125192641_notification_outbox';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "notification_outbox" ("id" bigserial primary key, "kind" varchar(32) not null, "user_id" int not null, "payload" text not null, "status" smallint not null default 0, "attempts" int not null default 0, "next_attempt_at" bigint not null, "created_at" bigint not null, "delivered_at" bigint null, "last_error" text null);`,
    );
    this.addSql(
      `create index "notification_outbox_due_index" on "notification_outbox" ("status", "next_attempt_at");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "notification_outbox" cascade;`);
  }
}
