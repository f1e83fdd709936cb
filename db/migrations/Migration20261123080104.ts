import { Migration } from '@mikro-orm/migrations';

export class Migration20261123080104 extends Migration {
  override name = 'Migration20261123080104';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "abilities" ("group" varchar(64) not null, "model" varchar(255) not null, "channel_id" int not null, "enabled" boolean not null default true, "priority" bigint not null default '0', "weight" int not null default 0, "tag" varchar(128) null, primary key ("group", "model", "channel_id"));`,
    );
    this.addSql(`create index "abilities_channel_id_index" on "abilities" ("channel_id");`);
    this.addSql(`create index "abilities_tag_index" on "abilities" ("tag");`);
    this.addSql(
      `create index "abilities_group_model_enabled_priority_index" on "abilities" ("group", "model", "enabled", "priority");`,
    );

    this.addSql(
      `create table "audit_entries" ("id" bigserial primary key, "actor_id" int null, "action" varchar(64) not null, "target_type" varchar(64) not null default '', "target_id" varchar(191) not null default '', "before" text null, "after" text null, "ip" varchar(64) not null default '', "created_at" timestamptz not null default now());`,
    );
    this.addSql(`create index "audit_entries_actor_id_index" on "audit_entries" ("actor_id");`);
    this.addSql(`create index "audit_entries_action_index" on "audit_entries" ("action");`);
    this.addSql(`create index "audit_entries_created_at_index" on "audit_entries" ("created_at");`);
    this.addSql(`create index "audit_entries_target_index" on "audit_entries" ("target_type", "target_id");`);

    this.addSql(
      `create table "channels" ("id" serial primary key, "type" int not null default 1, "name" varchar(128) not null default '', "key" text not null default '', "openai_organization" varchar(128) null, "max_input_tokens" int not null default 0, "base_url" varchar(512) not null default '', "other" text not null default '', "model_mapping" text not null default '', "status_code_mapping" text not null default '', "setting" text not null default '', "models" text not null default '', "group" varchar(255) not null default 'default', "auto_ban" smallint not null default 1, "test_model" varchar(128) not null default '', "priority" bigint not null default '0', "weight" int not null default 0, "tag" varchar(128) null, "status" smallint not null default 1, "response_time" int not null default 0, "used_quota" bigint not null default '0', "balance" double precision not null default 0, "balance_updated_time" bigint not null default '0', "created_time" bigint not null default '0', "test_time" bigint not null default '0', "other_info" text not null default '');`,
    );
    this.addSql(`create index "channels_type_index" on "channels" ("type");`);
    this.addSql(`create index "channels_name_index" on "channels" ("name");`);
    this.addSql(`create index "channels_priority_index" on "channels" ("priority");`);
    this.addSql(`create index "channels_tag_index" on "channels" ("tag");`);
    this.addSql(`create index "channels_status_index" on "channels" ("status");`);

    this.addSql(
      `create table "logs" ("id" bigserial primary key, "user_id" int not null default 0, "created_at" bigint not null default '0', "type" smallint not null, "content" text not null default '', "username" varchar(64) not null default '', "token_name" varchar(128) not null default '', "token_id" int not null default 0, "model_name" varchar(255) not null default '', "quota" bigint not null default '0', "prompt_tokens" int not null default 0, "completion_tokens" int not null default 0, "use_time" int not null default 0, "is_stream" boolean not null default false, "channel_id" int not null default 0, "channel_name" varchar(128) not null default '', "group" varchar(64) not null default '', "other" text not null default '', "request_id" varchar(64) null, "ip" varchar(64) not null default '');`,
    );
    this.addSql(`create index "logs_created_at_index" on "logs" ("created_at");`);
    this.addSql(`create index "logs_username_index" on "logs" ("username");`);
    this.addSql(`create index "logs_token_name_index" on "logs" ("token_name");`);
    this.addSql(`create index "logs_model_name_index" on "logs" ("model_name");`);
    this.addSql(`alter table "logs" add constraint "logs_request_id_unique" unique ("request_id");`);
    this.addSql(`create index "logs_user_id_created_at_index" on "logs" ("user_id", "created_at");`);
    this.addSql(`create index "logs_type_created_at_index" on "logs" ("type", "created_at");`);
    this.addSql(`create index "logs_channel_id_created_at_index" on "logs" ("channel_id", "created_at");`);

    this.addSql(
      `create table "midjourney_tasks" ("id" serial primary key, "code" smallint not null default 0, "user_id" int not null, "action" varchar(40) not null default '', "mj_id" varchar(128) not null default '', "prompt" text not null default '', "prompt_en" text not null default '', "description" text not null default '', "state" text not null default '', "created_at" bigint not null default '0', "submit_time" bigint not null default '0', "start_time" bigint not null default '0', "finish_time" bigint not null default '0', "image_url" text not null default '', "status" varchar(20) not null default '', "progress" varchar(30) not null default '', "fail_reason" text not null default '', "channel_id" int not null default 0, "quota" bigint not null default '0', "buttons" text not null default '', "properties" text not null default '');`,
    );
    this.addSql(`create index "midjourney_tasks_mj_id_index" on "midjourney_tasks" ("mj_id");`);
    this.addSql(`create index "midjourney_tasks_status_index" on "midjourney_tasks" ("status");`);
    this.addSql(`create index "midjourney_tasks_user_id_id_index" on "midjourney_tasks" ("user_id", "id");`);
    this.addSql(
      `create index "midjourney_tasks_channel_id_id_index" on "midjourney_tasks" ("channel_id", "id");`,
    );

    this.addSql(
      `create table "options" ("key" varchar(128) not null, "value" text not null default '', primary key ("key"));`,
    );

    this.addSql(
      `create table "orders" ("id" serial primary key, "user_id" int not null, "order_id" varchar(64) not null, "email" varchar(255) not null default '', "product" numeric(12,2) not null default 0, "money" numeric(12,2) not null default 0, "quota" bigint not null default '0', "order_type" smallint not null default 1, "pay_method" smallint not null default 1, "status" smallint not null default 0, "trade_no" varchar(128) not null default '', "created_at" bigint not null default '0', "paid_at" bigint not null default '0');`,
    );
    this.addSql(`create index "orders_user_id_index" on "orders" ("user_id");`);
    this.addSql(`alter table "orders" add constraint "orders_order_id_unique" unique ("order_id");`);
    this.addSql(`create index "orders_status_index" on "orders" ("status");`);

    this.addSql(
      `create table "quota_data" ("id" serial primary key, "user_id" int not null, "username" varchar(64) not null default '', "model_name" varchar(255) not null default '', "created_at" bigint not null, "token_used" bigint not null default '0', "count" int not null default 0, "quota" bigint not null default '0');`,
    );
    this.addSql(`create index "quota_data_created_at_index" on "quota_data" ("created_at");`);
    this.addSql(
      `alter table "quota_data" add constraint "quota_data_user_model_hour_unique" unique ("user_id", "model_name", "created_at");`,
    );

    this.addSql(
      `create table "redemptions" ("id" serial primary key, "user_id" int not null default 0, "key" varchar(64) not null, "status" smallint not null default 1, "name" varchar(128) not null default '', "quota" bigint not null default '100000', "created_time" bigint not null default '0', "redeemed_time" bigint not null default '0', "used_user_id" int not null default 0, "deleted_at" timestamptz null);`,
    );
    this.addSql(`alter table "redemptions" add constraint "redemptions_key_unique" unique ("key");`);
    this.addSql(`create index "redemptions_name_index" on "redemptions" ("name");`);

    this.addSql(
      `create table "tasks" ("id" bigserial primary key, "created_at" bigint not null default '0', "updated_at" bigint not null default '0', "task_id" varchar(191) not null default '', "platform" varchar(30) not null default '', "user_id" int not null, "channel_id" int not null default 0, "quota" bigint not null default '0', "action" varchar(40) not null default '', "status" varchar(20) not null default '', "fail_reason" text not null default '', "submit_time" bigint not null default '0', "start_time" bigint not null default '0', "finish_time" bigint not null default '0', "progress" varchar(20) not null default '', "properties" text not null default '', "data" text not null default '');`,
    );
    this.addSql(`create index "tasks_created_at_index" on "tasks" ("created_at");`);
    this.addSql(`create index "tasks_task_id_index" on "tasks" ("task_id");`);
    this.addSql(`create index "tasks_platform_index" on "tasks" ("platform");`);
    this.addSql(`create index "tasks_status_index" on "tasks" ("status");`);
    this.addSql(`create index "tasks_user_id_id_index" on "tasks" ("user_id", "id");`);
    this.addSql(`create index "tasks_channel_id_id_index" on "tasks" ("channel_id", "id");`);

    this.addSql(
      `create table "tokens" ("id" serial primary key, "user_id" int not null, "key" varchar(64) not null, "name" varchar(128) not null default '', "status" smallint not null default 1, "remain_quota" bigint not null default '0', "used_quota" bigint not null default '0', "unlimited_quota" boolean not null default false, "expired_time" bigint not null default '-1', "created_time" bigint not null default '0', "accessed_time" bigint not null default '0', "model_limits_enabled" boolean not null default false, "model_limits" text not null default '', "allow_ips" text not null default '', "group" varchar(64) not null default '', "deleted_at" timestamptz null);`,
    );
    this.addSql(`alter table "tokens" add constraint "tokens_key_unique" unique ("key");`);
    this.addSql(`create index "tokens_name_index" on "tokens" ("name");`);
    this.addSql(`create index "tokens_user_id_id_index" on "tokens" ("user_id", "id");`);

    this.addSql(
      `create table "users" ("id" serial primary key, "username" varchar(64) not null, "display_name" varchar(64) not null default '', "password_hash" varchar(255) not null default '', "access_token" varchar(64) null, "aff_code" varchar(32) not null, "group" varchar(64) not null default 'default', "quota" bigint not null default '0', "used_quota" bigint not null default '0', "request_count" int not null default 0, "aff_count" int not null default 0, "aff_quota" bigint not null default '0', "aff_history_quota" bigint not null default '0', "inviter_id" int not null default 0, "role" smallint not null default 1, "status" smallint not null default 1, "email" varchar(255) not null default '', "github_id" varchar(64) not null default '', "wechat_id" varchar(64) not null default '', "telegram_id" varchar(64) not null default '', "linux_do_id" varchar(64) not null default '', "setting" text not null default '', "created_at" timestamptz not null default now(), "deleted_at" timestamptz null);`,
    );
    this.addSql(`alter table "users" add constraint "users_username_unique" unique ("username");`);
    this.addSql(`alter table "users" add constraint "users_access_token_unique" unique ("access_token");`);
    this.addSql(`alter table "users" add constraint "users_aff_code_unique" unique ("aff_code");`);
    this.addSql(`create index "users_group_index" on "users" ("group");`);
    this.addSql(`create index "users_inviter_id_index" on "users" ("inviter_id");`);
    this.addSql(`create index "users_status_index" on "users" ("status");`);
    this.addSql(`create index "users_email_index" on "users" ("email");`);
    this.addSql(`create index "users_github_id_index" on "users" ("github_id");`);
    this.addSql(`create index "users_wechat_id_index" on "users" ("wechat_id");`);
    this.addSql(`create index "users_telegram_id_index" on "users" ("telegram_id");`);
    this.addSql(`create index "users_linux_do_id_index" on "users" ("linux_do_id");`);

    this.addSql(
      `create table "sessions" ("id" varchar(64) not null, "user_id" int not null, "expires_at" timestamptz not null, "created_at" timestamptz not null default now(), "last_seen_at" timestamptz not null default now(), "ip" varchar(64) not null default '', "user_agent" varchar(512) not null default '', primary key ("id"));`,
    );
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`create index "sessions_expires_at_index" on "sessions" ("expires_at");`);

    this.addSql(
      `create table "versions" ("id" serial primary key, "version" varchar(64) not null, "downurl" varchar(1024) not null, "filemd5" varchar(32) not null default '', "force_ids" text not null default '', "force" smallint not null default 0, "os_type" smallint not null default 1, "remark" text not null default '', "last_date" timestamptz not null default now());`,
    );
    this.addSql(`create index "versions_version_index" on "versions" ("version");`);
    this.addSql(`create index "versions_os_type_index" on "versions" ("os_type");`);

    this.addSql(
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "sessions" drop constraint "sessions_user_id_foreign";`);

    this.addSql(`drop table if exists "abilities" cascade;`);
    this.addSql(`drop table if exists "audit_entries" cascade;`);
    this.addSql(`drop table if exists "channels" cascade;`);
    this.addSql(`drop table if exists "logs" cascade;`);
    this.addSql(`drop table if exists "midjourney_tasks" cascade;`);
    this.addSql(`drop table if exists "options" cascade;`);
    this.addSql(`drop table if exists "orders" cascade;`);
    this.addSql(`drop table if exists "quota_data" cascade;`);
    this.addSql(`drop table if exists "redemptions" cascade;`);
    this.addSql(`drop table if exists "tasks" cascade;`);
    this.addSql(`drop table if exists "tokens" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "sessions" cascade;`);
    this.addSql(`drop table if exists "versions" cascade;`);
  }
}
