import { defineEntity, p } from '@mikro-orm/core';

/** versions.os_type */
export const OsType = { Windows: 1, MacIntel: 2, MacApple: 3 } as const;
export type OsType = (typeof OsType)[keyof typeof OsType];

/** An app release (seed 001 §3 "Version"). Column names follow the listed rows (downurl, filemd5, ...). */
export const VersionSchema = defineEntity({
  name: 'Version',
  tableName: 'versions',
  properties: {
    id: p.integer().primary().autoincrement(),
    version: p.string().length(64).index('versions_version_index'),
    downurl: p.string().length(1024),
    filemd5: p.string().length(32).default(''),
    /** comma-separated versions that must upgrade */
    forceIds: p.text().default(''),
    /** 1 forced, 0 optional */
    force: p.smallint().default(0),
    osType: p.smallint().default(OsType.Windows).index('versions_os_type_index'),
    /** rich text */
    remark: p.text().default(''),
    lastDate: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Version extends VersionSchema.class {}
VersionSchema.setClass(Version);
