import { Migration } from '@mikro-orm/migrations';

/**
 * midjourney_tasks.notify_hash: the SHA-256 (hex) of the per-task secret the relay puts in the callback URL it
 * gives the upstream at submit (ADR 036). A callback to `/mj/notify/<secret>` is heard only when the secret hashes
 * to this value for the task it names; tasks submitted before carry '' and are only ever polled.
 */
export class Migration20261129100000_mj_notify_secret extends Migration {
  override name = 'Migration20261129100000_mj_notify_secret';

  override up(): void | Promise<void> {
    this.addSql(`alter table "midjourney_tasks" add column "notify_hash" varchar(64) not null default '';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "midjourney_tasks" drop column "notify_hash";`);
  }
}
