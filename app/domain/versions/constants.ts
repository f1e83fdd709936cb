/** Client-safe constants of version management (seed 001 §3 "Version"). */

/** versions.os_type: 1 Windows, 2 Mac Intel, 3 Mac Apple (the same values as the entity's OsType). */
export const OS_TYPES = [1, 2, 3] as const;
export type OsTypeValue = (typeof OS_TYPES)[number];

/** i18n key (namespace `versions`) of each OS type. */
export function osKey(osType: number): 'windows' | 'macIntel' | 'macApple' | 'unknown' {
  if (osType === 1) return 'windows';
  if (osType === 2) return 'macIntel';
  if (osType === 3) return 'macApple';
  return 'unknown';
}

/** The version modal's width (seed 001 §9). */
export const VERSION_MODAL_WIDTH = 650;

/** Row format of GET /api/version/list and GET /api/version/{id} (seed 001 §3: lowercase names). */
export type VersionWire = {
  id: number;
  os_type: number;
  version: string;
  downurl: string;
  filemd5: string;
  /** comma-separated versions that must upgrade (the form's ForceIds) */
  forceids: string;
  force: number;
  /** ISO 8601 */
  last_date: string;
  /** rich text as stored; pages show `versionView(row).remark_html` (sanitized on the server) */
  remark: string;
};
