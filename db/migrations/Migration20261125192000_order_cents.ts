import { Migration } from '@mikro-orm/migrations';

/**
 * orders: amounts as integers (ADR 027): product in US cents and money in CNY fen replace the numeric columns
 * (existing rows converted exactly: numeric(12,2) x 100); expiry, close and codes-mailed times; the QR content.
 */
export class Migration20261125192000_order_cents extends Migration {
  override name = 'Migration20261125192000_order_cents';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "orders" add column "product_cents" bigint not null default '0', add column "money_cents" bigint not null default '0', add column "expires_at" bigint not null default '0', add column "closed_at" bigint not null default '0', add column "mailed_at" bigint not null default '0', add column "code_url" varchar(512) not null default '';`,
    );
    this.addSql(
      `update "orders" set "product_cents" = round("product" * 100)::bigint, "money_cents" = round("money" * 100)::bigint;`,
    );
    this.addSql(`alter table "orders" drop column "product", drop column "money";`);
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "orders" add column "product" numeric(12,2) not null default 0, add column "money" numeric(12,2) not null default 0;`,
    );
    this.addSql(`update "orders" set "product" = "product_cents" / 100.0, "money" = "money_cents" / 100.0;`);
    this.addSql(
      `alter table "orders" drop column "product_cents", drop column "money_cents", drop column "expires_at", drop column "closed_at", drop column "mailed_at", drop column "code_url";`,
    );
  }
}
