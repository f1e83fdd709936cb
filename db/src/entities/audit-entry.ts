import { defineEntity, p } from '@mikro-orm/core';

/** One admin change (options, users, channels ...): who, what, before and after. */
export const AuditEntrySchema = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_entries',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    /** null for the system itself */
    actorId: p.integer().nullable().index('audit_entries_actor_id_index'),
    /** e.g. option.set, user.promote */
    action: p.string().length(64).index('audit_entries_action_index'),
    targetType: p.string().length(64).default(''),
    targetId: p.string().length(191).default(''),
    /** JSON text, secrets redacted */
    before: p.text().nullable(),
    /** JSON text, secrets redacted */
    after: p.text().nullable(),
    ip: p.string().length(64).default(''),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .index('audit_entries_created_at_index'),
  },
  indexes: [{ name: 'audit_entries_target_index', properties: ['targetType', 'targetId'] }],
});

export class AuditEntry extends AuditEntrySchema.class {}
AuditEntrySchema.setClass(AuditEntry);
