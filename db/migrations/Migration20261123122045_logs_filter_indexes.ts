import { Migration } from '@mikro-orm/migrations';

export class Migration20261123122045_logs_filter_indexes extends Migration {
  override name = 'Migration20261123122045_logs_filter_indexes';

  override up(): void | Promise<void> {
    this.addSql(`drop index "logs_model_name_index";`);
    this.addSql(`drop index "logs_token_name_index";`);
    this.addSql(`drop index "logs_username_index";`);
    this.addSql(`create index "logs_username_created_at_index" on "logs" ("username", "created_at");`);
    this.addSql(`create index "logs_token_name_created_at_index" on "logs" ("token_name", "created_at");`);
    this.addSql(`create index "logs_model_name_created_at_index" on "logs" ("model_name", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "logs_username_created_at_index";`);
    this.addSql(`drop index "logs_token_name_created_at_index";`);
    this.addSql(`drop index "logs_model_name_created_at_index";`);
    this.addSql(`create index "logs_model_name_index" on "logs" ("model_name");`);
    this.addSql(`create index "logs_token_name_index" on "logs" ("token_name");`);
    this.addSql(`create index "logs_username_index" on "logs" ("username");`);
  }
}
