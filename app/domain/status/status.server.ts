import { enabledPayMethods } from '#app/domain/payments/config.server.ts';
import { sanitizeAdminHtml } from '#app/domain/security/sanitize-html.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** One configured chat page: `{ "<name>": "<url template>" }`, as in new-api's `Chats` option. */
export type ChatEntry = Record<string, string>;

/**
 * The public status object (seed 000 §3 "Public status object" + seed 001 §3 "Status object fields used here").
 * Public by definition: served unauthenticated at GET /api/status and embedded in every page. Never add secrets.
 */
export type PublicStatus = {
  system_name: string;
  logo: string;
  /** the Footer option through the admin HTML sanitizer (ADR 032): pages and new-api clients insert it as HTML */
  footer_html: string;
  quota_per_unit: number;
  display_in_currency: boolean;
  enable_drawing: boolean;
  enable_task: boolean;
  enable_data_export: boolean;
  chats: ChatEntry[];
  data_export_default_time: string;
  default_collapse_sidebar: boolean;
  mj_notify_enabled: boolean;
  chat_link: string;
  chat_link2: string;
  email_verification: boolean;
  turnstile_check: boolean;
  turnstile_site_key: string;
  github_oauth: boolean;
  github_client_id: string;
  linuxdo_oauth: boolean;
  linuxdo_client_id: string;
  wechat_login: boolean;
  wechat_qrcode: string;
  telegram_oauth: boolean;
  telegram_bot_name: string;
  version: string;
  /** unix seconds */
  start_time: number;
  top_up_link: string;
  min_topup: number;
  enable_online_topup: boolean;
  server_address: string;
  self_use_mode_enabled: boolean;
  demo_site_enabled: boolean;
};

/**
 * Options are read through this narrow view so the builder does not depend on the OptionService's key union;
 * values may arrive typed (boolean, number, parsed JSON) or as the stored strings, and are coerced here.
 */
type OptionReader = { get(key: string): unknown };

function reader(services: Pick<ConsoleServices, 'options'>) {
  const options = services.options as unknown as OptionReader;
  const raw = (key: string): unknown => {
    try {
      return options.get(key);
    } catch {
      return undefined;
    }
  };
  return {
    str(key: string, fallback = ''): string {
      const v = raw(key);
      if (v === undefined || v === null) return fallback;
      return typeof v === 'string' ? v : String(v);
    },
    bool(key: string, fallback = false): boolean {
      const v = raw(key);
      if (typeof v === 'boolean') return v;
      if (v === 'true') return true;
      if (v === 'false') return false;
      return fallback;
    },
    num(key: string, fallback: number): number {
      const v = raw(key);
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
      return Number.isFinite(n) ? n : fallback;
    },
    json(key: string): unknown {
      const v = raw(key);
      if (typeof v !== 'string') return v;
      try {
        return JSON.parse(v);
      } catch {
        return undefined;
      }
    },
  };
}

/** `Chats` is a JSON list of single-entry objects `{name: url}`; anything malformed is dropped. */
export function parseChats(value: unknown): ChatEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (entry): entry is ChatEntry =>
      typeof entry === 'object' &&
      entry !== null &&
      !Array.isArray(entry) &&
      Object.keys(entry).length > 0 &&
      Object.values(entry).every((url) => typeof url === 'string'),
  );
}

/**
 * Option that drives `enable_task` (new-api: `enable_task`). Switchyard names it `TaskEnabled`
 * (boolean, default true: async music tasks are on unless an admin turns them off).
 */
export const TASK_ENABLED_OPTION = 'TaskEnabled';

export function getPublicStatus(
  services: Pick<ConsoleServices, 'options' | 'version' | 'startedAt'>,
): PublicStatus {
  const o = reader(services);
  return {
    system_name: o.str('SystemName', 'Switchyard') || 'Switchyard',
    logo: o.str('Logo'),
    footer_html: sanitizeAdminHtml(o.str('Footer')),
    quota_per_unit: o.num('QuotaPerUnit', 500_000),
    display_in_currency: o.bool('DisplayInCurrencyEnabled', true),
    enable_drawing: o.bool('DrawingEnabled', true),
    enable_task: o.bool(TASK_ENABLED_OPTION, true),
    enable_data_export: o.bool('DataExportEnabled', true),
    chats: parseChats(o.json('Chats')),
    data_export_default_time: o.str('DataExportDefaultTime', 'hour') || 'hour',
    default_collapse_sidebar: o.bool('DefaultCollapseSidebar', false),
    mj_notify_enabled: o.bool('MjNotifyEnabled', false),
    chat_link: o.str('ChatLink'),
    chat_link2: o.str('ChatLink2'),
    email_verification: o.bool('EmailVerificationEnabled', false),
    turnstile_check: o.bool('TurnstileCheckEnabled', false),
    turnstile_site_key: o.str('TurnstileSiteKey'),
    github_oauth: o.bool('GitHubOAuthEnabled', false),
    github_client_id: o.str('GitHubClientId'),
    linuxdo_oauth: o.bool('LinuxDOOAuthEnabled', false),
    linuxdo_client_id: o.str('LinuxDOClientId'),
    wechat_login: o.bool('WeChatAuthEnabled', false),
    wechat_qrcode: o.str('WeChatAccountQRCodeImageURL'),
    telegram_oauth: o.bool('TelegramOAuthEnabled', false),
    telegram_bot_name: o.str('TelegramBotName'),
    version: services.version,
    start_time: services.startedAt,
    top_up_link: o.str('TopUpLink'),
    min_topup: o.num('MinTopUp', 1),
    // an order can be created: at least one pay method is fully configured (ADR 027)
    enable_online_topup: enabledPayMethods(services.options).length > 0,
    server_address: o.str('ServerAddress'),
    self_use_mode_enabled: o.bool('SelfUseModeEnabled', false),
    demo_site_enabled: o.bool('DemoSiteEnabled', false),
  };
}

/** Admin-authored page content (HomePageContent, About, Notice); '' when unset. */
export type ContentOption = 'HomePageContent' | 'About' | 'Notice';

export function getContent(services: Pick<ConsoleServices, 'options'>, key: ContentOption): string {
  return reader(services).str(key).trim();
}
