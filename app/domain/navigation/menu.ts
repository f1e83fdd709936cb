/**
 * Navigation as pure functions (seed 001 §2.2 top navigation, §2.3 side menu; seed 000 "Layout rules"),
 * shared by the server render and the browser. Items carry i18n keys, never display text.
 */

import { formatDateTime } from '#app/utils/time.ts';

/** What the menu needs from the signed-in user and the public status. */
export type MenuUser = { role: number } | null;
export type MenuStatus = {
  enable_data_export: boolean;
  enable_drawing: boolean;
  enable_task: boolean;
  chats: ReadonlyArray<Record<string, string>>;
  self_use_mode_enabled?: boolean;
  /** an order can be created (a pay method is fully configured): the admin orders entry shows */
  enable_online_topup?: boolean;
};

export type MenuItem = {
  key: string;
  to: string;
  /** i18n key in the `common` namespace */
  labelKey: string;
  /** literal label (configured chat names); shown instead of labelKey when set */
  label?: string;
};

export const ADMIN_ROLE = 10;

/** Console pages that arrive with later issues: orders (issue 16), drawing and async tasks (issue 17). */
export type FeaturePage = 'order' | 'midjourney' | 'task';

/**
 * The feature pages that exist in this build. An entry for a page not listed here is hidden (never a link to a
 * "page does not exist"); the issue that adds the page adds its key here, and the flag rules below still apply.
 */
export const builtFeaturePages: ReadonlySet<FeaturePage> = new Set<FeaturePage>([
  'order',
  'midjourney',
  'task',
]);

export function isAdmin(user: MenuUser): boolean {
  return (user?.role ?? 0) >= ADMIN_ROLE;
}

/** Chat entries: exactly one configured chat -> a single "chat" entry to /chat/0; more -> one entry each. */
export function chatMenuItems(chats: MenuStatus['chats']): MenuItem[] {
  if (chats.length === 0) return [];
  if (chats.length === 1) return [{ key: 'chat', to: '/chat/0', labelKey: 'sidebar.chat' }];
  return chats.map((chat, i) => ({
    key: `chat-${i}`,
    to: `/chat/${i}`,
    labelKey: 'sidebar.chat',
    label: Object.keys(chat)[0] ?? `#${i}`,
  }));
}

/**
 * The side menu (seed 001 §2.3) in the seed's order, plus the playground after tokens. Signed-out visitors get
 * none (no console sidebar). `built` is the set of feature pages that exist (see builtFeaturePages).
 */
export function sideMenuItems(
  user: MenuUser,
  status: MenuStatus,
  built: ReadonlySet<FeaturePage> = builtFeaturePages,
): MenuItem[] {
  if (!user) return [];
  const admin = isAdmin(user);
  const items: Array<MenuItem | false> = [
    admin && { key: 'channel', to: '/channel', labelKey: 'sidebar.channel' },
    { key: 'token', to: '/token', labelKey: 'sidebar.token' },
    { key: 'playground', to: '/playground', labelKey: 'sidebar.playground' },
    ...chatMenuItems(status.chats),
    status.enable_data_export && { key: 'detail', to: '/detail', labelKey: 'sidebar.detail' },
    admin && { key: 'redemption', to: '/redemption', labelKey: 'sidebar.redemption' },
    { key: 'topup', to: '/topup', labelKey: 'sidebar.topup' },
    admin && { key: 'user', to: '/user', labelKey: 'sidebar.user' },
    admin &&
      built.has('order') &&
      status.enable_online_topup === true && { key: 'order', to: '/order', labelKey: 'sidebar.order' },
    { key: 'log', to: '/log', labelKey: 'sidebar.log' },
    status.enable_drawing &&
      built.has('midjourney') && { key: 'midjourney', to: '/midjourney', labelKey: 'sidebar.midjourney' },
    status.enable_task && built.has('task') && { key: 'task', to: '/task', labelKey: 'sidebar.task' },
    { key: 'setting', to: '/setting', labelKey: 'sidebar.setting' },
    admin && { key: 'version', to: '/version', labelKey: 'sidebar.version' },
  ];
  return items.filter((item): item is MenuItem => item !== false);
}

/** Top navigation (seed 001 §2.2). The console entry opens the dashboard when data export is on, else tokens. */
export function topNavItems(status: Pick<MenuStatus, 'enable_data_export'>): MenuItem[] {
  return [
    { key: 'home', to: '/', labelKey: 'nav.home' },
    { key: 'console', to: status.enable_data_export ? '/detail' : '/token', labelKey: 'nav.console' },
    { key: 'chat', to: '/chat', labelKey: 'nav.chat' },
    { key: 'pricing', to: '/pricing', labelKey: 'nav.pricing' },
    { key: 'about', to: '/about', labelKey: 'nav.about' },
    { key: 'guide', to: '/guide', labelKey: 'nav.guide' },
    { key: 'usebook', to: '/usebook', labelKey: 'nav.usebook' },
    { key: 'download', to: '/download', labelKey: 'nav.download' },
  ];
}

/** Whether `to` is the current page (exact for "/", otherwise the path or one of its sub-paths). */
export function isActivePath(pathname: string, to: string): boolean {
  if (to === '/') return pathname === '/';
  return pathname === to || pathname.startsWith(`${to}/`);
}

/**
 * Seed 000 "Layout rules": login and register hide header and sidebar; home, chat and about hide the sidebar.
 * (The width <= 600px rule is a CSS media query, so it holds without JavaScript.)
 */
export function layoutFor(pathname: string): { header: boolean; sidebar: boolean } {
  const path = pathname.replace(/\/+$/, '') || '/';
  const auth = path === '/login' || path === '/register';
  const noSidebar =
    auth || path === '/' || path === '/about' || path === '/chat' || path.startsWith('/chat/');
  return { header: !auth, sidebar: !noSidebar };
}

/** Routes of seed 000 §2 that need a signed-in user (prefix match). */
export const protectedPrefixes = [
  '/channel',
  '/token',
  '/playground',
  '/redemption',
  '/user',
  '/order',
  '/setting',
  '/version',
  '/topup',
  '/log',
  '/detail',
  '/midjourney',
  '/task',
  '/chat2link',
] as const;

export function isProtectedPath(pathname: string): boolean {
  if (pathname === '/user/reset' || pathname.startsWith('/user/reset/')) return false;
  return protectedPrefixes.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

/** The new-year easter egg shows on 1 January in the user's time zone (UTC until known). */
export function isNewYearsDay(date: Date, timeZone = 'UTC'): boolean {
  return formatDateTime(date, timeZone).slice(5, 10) === '01-01';
}
