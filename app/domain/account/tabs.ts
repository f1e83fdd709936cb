/** Tabs of /setting (seed 000 §2): personal for everyone, the rest for admins only. */
export const SETTING_TABS = [
  'personal',
  'operation',
  'ratelimit',
  'models',
  'system',
  'other',
  'pay',
  'modelTab',
] as const;
export type SettingTab = (typeof SETTING_TABS)[number];
export const DIALOGS = ['transfer', 'email', 'wechat', 'delete', 'password'] as const;
export type SettingDialog = (typeof DIALOGS)[number];

export function parseTab(value: string | null): SettingTab | null {
  if (!value) return 'personal';
  return (SETTING_TABS as readonly string[]).includes(value) ? (value as SettingTab) : null;
}

export function parseDialog(value: string | null): SettingDialog | null {
  return value && (DIALOGS as readonly string[]).includes(value) ? (value as SettingDialog) : null;
}
