import { Migration } from '@mikro-orm/migrations';

export class Migration20261123085621_oauth_unique extends Migration {
  override name = 'Migration20261123085621_oauth_unique';

  override up(): void | Promise<void> {
    this.addSql(`drop index "users_email_index";`);
    this.addSql(`drop index "users_github_id_index";`);
    this.addSql(`drop index "users_linux_do_id_index";`);
    this.addSql(`drop index "users_telegram_id_index";`);
    this.addSql(`drop index "users_wechat_id_index";`);
    this.addSql(`create unique index "users_email_unique" on "users" ("email") where "email" <> '';`);
    this.addSql(
      `create unique index "users_github_id_unique" on "users" ("github_id") where "github_id" <> '';`,
    );
    this.addSql(
      `create unique index "users_wechat_id_unique" on "users" ("wechat_id") where "wechat_id" <> '';`,
    );
    this.addSql(
      `create unique index "users_telegram_id_unique" on "users" ("telegram_id") where "telegram_id" <> '';`,
    );
    this.addSql(
      `create unique index "users_linux_do_id_unique" on "users" ("linux_do_id") where "linux_do_id" <> '';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "users_email_unique";`);
    this.addSql(`drop index "users_github_id_unique";`);
    this.addSql(`drop index "users_wechat_id_unique";`);
    this.addSql(`drop index "users_telegram_id_unique";`);
    this.addSql(`drop index "users_linux_do_id_unique";`);
    this.addSql(`create index "users_email_index" on "users" ("email");`);
    this.addSql(`create index "users_github_id_index" on "users" ("github_id");`);
    this.addSql(`create index "users_linux_do_id_index" on "users" ("linux_do_id");`);
    this.addSql(`create index "users_telegram_id_index" on "users" ("telegram_id");`);
    this.addSql(`create index "users_wechat_id_index" on "users" ("wechat_id");`);
  }
}
