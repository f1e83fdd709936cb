import { describe, expect, it } from 'vitest';
import {
  type FeaturePage,
  type MenuStatus,
  sideMenuItems,
  topNavItems,
} from '#app/domain/navigation/menu.ts';
import { menuIcon } from './sidebar.tsx';

describe('menu icons', () => {
  it('has an icon for every entry the menus can show', () => {
    const all = new Set<FeaturePage>(['order', 'midjourney', 'task']);
    const status: MenuStatus = {
      enable_data_export: true,
      enable_drawing: true,
      enable_task: true,
      chats: [{ A: 'https://a.example' }, { B: 'https://b.example' }],
    };
    const keys = [
      ...sideMenuItems({ role: 100 }, status, all),
      ...sideMenuItems({ role: 1 }, { ...status, chats: [{ A: 'x' }] }, all),
      ...topNavItems(status),
    ].map((i) => i.key);
    expect(keys.filter((k) => !menuIcon(k))).toEqual([]);
    expect(menuIcon('nope')).toBeUndefined();
  });
});
