import { defineEntity, p } from '@mikro-orm/core';

/** One routable (group, model, channel) triple, derived from a channel's groups and models. */
export const AbilitySchema = defineEntity({
  name: 'Ability',
  tableName: 'abilities',
  properties: {
    group: p.string().length(64).primary(),
    model: p.string().length(255).primary(),
    channelId: p.integer().primary().autoincrement(false).index('abilities_channel_id_index'),
    enabled: p.boolean().default(true),
    priority: p.bigint('number').default(0),
    weight: p.integer().default(0),
    tag: p.string().length(128).nullable().index('abilities_tag_index'),
  },
  primaryKeys: ['group', 'model', 'channelId'],
  indexes: [
    {
      name: 'abilities_group_model_enabled_priority_index',
      properties: ['group', 'model', 'enabled', 'priority'],
    },
  ],
});

export class Ability extends AbilitySchema.class {}
AbilitySchema.setClass(Ability);
