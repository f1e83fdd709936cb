import { Migration } from '@mikro-orm/migrations';

/**
 * Drawing and async tasks charged by the relay (ADR 029): the token charged (refunds go to user AND token), the
 * group priced in, the charge's request id, and the refund state (0 none due, 1 due, 2 done) that makes a failed
 * task's refund survive a relay crash between marking the task failed and Billing applying the refund.
 */
export class Migration20261125203000_task_refunds extends Migration {
  override name = 'Migration20261125203000_task_refunds';

  override up(): void | Promise<void> {
    for (const table of ['midjourney_tasks', 'tasks']) {
      this.addSql(
        `alter table "${table}" add column "token_id" int not null default 0, add column "group" varchar(64) not null default '', add column "request_id" varchar(64) not null default '', add column "refund" smallint not null default 0;`,
      );
    }
  }

  override down(): void | Promise<void> {
    for (const table of ['midjourney_tasks', 'tasks']) {
      this.addSql(
        `alter table "${table}" drop column "token_id", drop column "group", drop column "request_id", drop column "refund";`,
      );
    }
  }
}
