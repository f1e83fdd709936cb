import { describe, expect, it } from 'vitest';
import {
  builtFeaturePages,
  chatMenuItems,
  type FeaturePage,
  isActivePath,
  isNewYearsDay,
  isProtectedPath,
  layoutFor,
  type MenuStatus,
  sideMenuItems,
  topNavItems,
} from './menu.ts';

const status = (over: Partial<MenuStatus> = {}): MenuStatus => ({
  enable_data_export: false,
  enable_drawing: false,
  enable_task: false,
  chats: [],
  ...over,
});
const keys = (user: { role: number } | null, s: MenuStatus) => sideMenuItems(user, s).map((i) => i.key);

const allBuilt: ReadonlySet<FeaturePage> = new Set<FeaturePage>(['order', 'midjourney', 'task']);

describe('sideMenuItems', () => {
  it('shows only the common entries (and the playground) to a regular user with every flag off', () => {
    expect(keys({ role: 1 }, status())).toEqual(['token', 'playground', 'topup', 'log', 'setting']);
    const pg = sideMenuItems({ role: 1 }, status()).find((i) => i.key === 'playground');
    expect(pg).toEqual({ key: 'playground', to: '/playground', labelKey: 'sidebar.playground' });
  });

  it('gives a signed-out visitor no console menu', () => {
    expect(keys(null, status({ enable_data_export: true, chats: [{ A: 'https://a.example' }] }))).toEqual([]);
  });

  it('adds the admin entries for role 10 and above, in the seed order; orders only with online payment', () => {
    const today = [
      'channel',
      'token',
      'playground',
      'redemption',
      'topup',
      'user',
      'log',
      'setting',
      'version',
    ];
    expect(keys({ role: 10 }, status())).toEqual(today);
    expect(keys({ role: 100 }, status())).toEqual(today);
    expect(keys({ role: 9 }, status())).not.toContain('channel');
    expect(keys({ role: 10 }, status({ enable_online_topup: true }))).toContain('order');
    expect(sideMenuItems({ role: 10 }, status(), allBuilt).map((i) => i.key)).not.toContain('order');
    expect(
      sideMenuItems({ role: 10 }, status({ enable_online_topup: true }), allBuilt).map((i) => i.key),
    ).toEqual([
      'channel',
      'token',
      'playground',
      'redemption',
      'topup',
      'user',
      'order',
      'log',
      'setting',
      'version',
    ]);
    expect(
      sideMenuItems({ role: 1 }, status({ enable_online_topup: true }), allBuilt).map((i) => i.key),
    ).not.toContain('order');
  });

  it('every feature page exists now: drawing and async tasks follow their flags', () => {
    expect([...builtFeaturePages]).toEqual(['order', 'midjourney', 'task']);
    const k = keys(
      { role: 100 },
      status({ enable_data_export: true, enable_drawing: true, enable_task: true }),
    );
    expect(k).toContain('midjourney');
    expect(k).toContain('task');
    expect(k).toContain('detail');
    expect(keys({ role: 100 }, status({ enable_drawing: false }))).not.toContain('midjourney');
  });

  it('shows async tasks (the /task page exists) exactly when the task flag is on', () => {
    expect(keys({ role: 1 }, status({ enable_task: true }))).toContain('task');
    expect(keys({ role: 100 }, status({ enable_task: true }))).toContain('task');
    expect(keys({ role: 1 }, status())).not.toContain('task');
  });

  it('gates dashboard, drawing and async tasks on their flags once the pages exist', () => {
    const k = (s: MenuStatus) => sideMenuItems({ role: 1 }, s, allBuilt).map((i) => i.key);
    expect(k(status({ enable_data_export: true, enable_drawing: true, enable_task: true }))).toEqual([
      'token',
      'playground',
      'detail',
      'topup',
      'log',
      'midjourney',
      'task',
      'setting',
    ]);
    expect(k(status({ enable_drawing: true }))).toContain('midjourney');
    expect(k(status({ enable_drawing: true }))).not.toContain('task');
    expect(k(status({ enable_task: true }))).toEqual([
      'token',
      'playground',
      'topup',
      'log',
      'task',
      'setting',
    ]);
    expect(k(status())).not.toContain('detail');
  });

  it('links a single configured chat to /chat/0', () => {
    const items = sideMenuItems(
      { role: 1 },
      status({ chats: [{ NextChat: 'https://chat.example/#/?key={key}' }] }),
    );
    const chat = items.filter((i) => i.to.startsWith('/chat'));
    expect(chat).toEqual([{ key: 'chat', to: '/chat/0', labelKey: 'sidebar.chat' }]);
  });

  it('lists one entry per chat, named by the chat, when several are configured', () => {
    const chats: Record<string, string>[] = [
      { NextChat: 'https://a.example' },
      { LobeChat: 'https://b.example' },
      { Cherry: 'cherry://x' },
    ];
    expect(chatMenuItems(chats)).toEqual([
      { key: 'chat-0', to: '/chat/0', labelKey: 'sidebar.chat', label: 'NextChat' },
      { key: 'chat-1', to: '/chat/1', labelKey: 'sidebar.chat', label: 'LobeChat' },
      { key: 'chat-2', to: '/chat/2', labelKey: 'sidebar.chat', label: 'Cherry' },
    ]);
    expect(chatMenuItems([])).toEqual([]);
  });
});

describe('layoutFor (seed 000 layout rules)', () => {
  it.each([
    ['/login', false, false],
    ['/register', false, false],
    ['/', true, false],
    ['/about', true, false],
    ['/chat', true, false],
    ['/chat/1', true, false],
    ['/token', true, true],
    ['/chat2link', true, true],
    ['/pricing', true, true],
    ['/no/such/page', true, true],
  ])('%s -> header %s, sidebar %s', (path, header, sidebar) => {
    expect(layoutFor(path)).toEqual({ header, sidebar });
  });
});

describe('navigation helpers', () => {
  it('marks the active entry by path or sub-path, home only exactly', () => {
    expect(isActivePath('/', '/')).toBe(true);
    expect(isActivePath('/token', '/')).toBe(false);
    expect(isActivePath('/channel/edit/3', '/channel')).toBe(true);
    expect(isActivePath('/channels', '/channel')).toBe(false);
  });

  it('knows the protected routes of the route map', () => {
    expect(isProtectedPath('/token')).toBe(true);
    expect(isProtectedPath('/user/edit/2')).toBe(true);
    expect(isProtectedPath('/user/reset')).toBe(false);
    expect(isProtectedPath('/pricing')).toBe(false);
    expect(isProtectedPath('/chat/0')).toBe(false);
    expect(isProtectedPath('/chat2link')).toBe(true);
  });

  it('points the console entry at the dashboard only when data export is on', () => {
    const consoleTo = (on: boolean) =>
      topNavItems({ enable_data_export: on }).find((i) => i.key === 'console')?.to;
    expect(consoleTo(true)).toBe('/detail');
    expect(consoleTo(false)).toBe('/token');
    expect(topNavItems({ enable_data_export: false }).map((i) => i.key)).toEqual([
      'home',
      'console',
      'chat',
      'pricing',
      'about',
      'guide',
      'usebook',
      'download',
    ]);
  });

  it('detects 1 January in the user zone', () => {
    expect(isNewYearsDay(new Date(Date.UTC(2027, 0, 1, 12)))).toBe(true);
    expect(isNewYearsDay(new Date(Date.UTC(2027, 0, 2)))).toBe(false);
    expect(isNewYearsDay(new Date(Date.UTC(2026, 11, 31, 23, 59)))).toBe(false);
    // 31 December 17:00 UTC is already 1 January in Shanghai
    expect(isNewYearsDay(new Date(Date.UTC(2026, 11, 31, 17)), 'Asia/Shanghai')).toBe(true);
    expect(isNewYearsDay(new Date(Date.UTC(2027, 0, 1, 17)), 'Asia/Shanghai')).toBe(false);
  });
});
