import { defineEntity, p } from '@mikro-orm/core';

/** A runtime setting (seed 000 §3 "Option"); typed through options/registry.ts. */
export const OptionSchema = defineEntity({
  name: 'Option',
  tableName: 'options',
  properties: {
    key: p.string().length(128).primary(),
    value: p.text().default(''),
  },
});

export class Option extends OptionSchema.class {}
OptionSchema.setClass(Option);
